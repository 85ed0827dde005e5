import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Controller, Get, Header, NotFoundException, Param, UseGuards } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RouteConfig } from '@nestjs/platform-fastify';
import { apiDocumentJson } from '@relaygram/openapi';
import type { FastifyInstance } from 'fastify';
import { AdminEnabledGuard } from '../auth/admin-token.guard';
import { ADMIN_PUBLIC_DIR } from '../page/admin-page-assets';
import { REFERENCE_DOCS } from './api-reference.docs';

// Swagger UI sets style attributes, hence 'unsafe-inline' for styles (never for scripts).
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
  "frame-ancestors 'none'";

/** Swagger UI's scripts, from the swagger-ui-dist package. */
const SWAGGER_UI_SCRIPTS = ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js'];

interface ReferenceFiles {
  page: Buffer;
  scripts: Map<string, Buffer>;
  style: Buffer;
}

function loadFiles(): ReferenceFiles {
  const swaggerUi = dirname(require.resolve('swagger-ui-dist/package.json'));
  const scripts = new Map<string, Buffer>();
  for (const name of SWAGGER_UI_SCRIPTS) scripts.set(name, readFileSync(join(swaggerUi, name)));
  scripts.set('reference.js', readFileSync(join(ADMIN_PUBLIC_DIR, 'reference.js')));
  return {
    page: readFileSync(join(ADMIN_PUBLIC_DIR, 'reference.html')),
    scripts,
    style: readFileSync(join(swaggerUi, 'swagger-ui.css')),
  };
}

/**
 * The management document and its reference page (Swagger UI, from the package, no
 * CDN), guarded like the admin page: they load without a token and do not exist without
 * ADMIN_TOKEN. The files are read on the first request and kept.
 */
@Controller('admin')
@UseGuards(AdminEnabledGuard)
export class ApiReferenceController {
  private loaded?: ReferenceFiles;

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  @Get('openapi.json')
  @RouteConfig(REFERENCE_DOCS.document)
  @Header('Content-Type', 'application/json; charset=utf-8')
  @Header('Cache-Control', 'no-cache')
  document(): string {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    return apiDocumentJson(fastify, 'management');
  }

  @Get('reference')
  @RouteConfig(REFERENCE_DOCS.page)
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('Cache-Control', 'no-cache')
  page(): Buffer {
    return this.files().page;
  }

  @Get('reference/assets/:file')
  @RouteConfig(REFERENCE_DOCS.script)
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  script(@Param('file') file: string): Buffer {
    const script = this.files().scripts.get(file);
    if (!script) throw new NotFoundException({ error: `no reference script ${file}` });
    return script;
  }

  @Get('reference/assets/swagger-ui.css')
  @RouteConfig(REFERENCE_DOCS.style)
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-cache')
  style(): Buffer {
    return this.files().style;
  }

  private files(): ReferenceFiles {
    this.loaded ??= loadFiles();
    return this.loaded;
  }
}
