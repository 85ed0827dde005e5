import { Controller, Get, Header, NotFoundException, Param, UseGuards } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { AdminEnabledGuard } from '../auth/admin-token.guard';
import { REFERENCE_DOCS } from '../reference/api-reference.docs';
import {
  ADMIN_SCRIPTS,
  loadAdminPageAssets,
  type AdminPageAssets,
  type AdminScript,
} from './admin-page-assets';

// Only this origin's own script and style; the page talks to /admin/api and nothing else.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The admin page: one HTML file, its scripts, one stylesheet, all served from memory. It
 * needs no token to load (it asks for one); without ADMIN_TOKEN it does not exist.
 */
@Controller('admin')
@UseGuards(AdminEnabledGuard)
export class AdminPageController {
  private readonly assets: AdminPageAssets = loadAdminPageAssets();

  @Get()
  @RouteConfig(REFERENCE_DOCS.adminPage)
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('Cache-Control', 'no-cache')
  page(): Buffer {
    return this.assets.html;
  }

  @Get('assets/:file')
  @RouteConfig(REFERENCE_DOCS.adminScript)
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  script(@Param('file') file: string): Buffer {
    if (!(ADMIN_SCRIPTS as readonly string[]).includes(file)) {
      throw new NotFoundException(`no admin script ${file}`);
    }
    return this.assets.scripts[file as AdminScript];
  }

  @Get('assets/admin.css')
  @RouteConfig(REFERENCE_DOCS.adminStyle)
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  style(): Buffer {
    return this.assets.style;
  }
}
