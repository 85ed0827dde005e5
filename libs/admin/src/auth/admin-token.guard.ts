import {
  Injectable,
  NotFoundException,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { createSecretMatcher, type SecretMatcher } from '@relaygram/signing';
import type { FastifyReply, FastifyRequest } from 'fastify';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The admin API and page exist only when ADMIN_TOKEN is set (SPEC section 7). */
@Injectable()
export class AdminEnabledGuard implements CanActivate {
  constructor(private readonly config: ConfigService) {}

  canActivate(): boolean {
    if (!this.config.env.adminToken) throw new NotFoundException({ error: 'not found' });
    return true;
  }
}

/**
 * `Authorization: Bearer $ADMIN_TOKEN` on every admin API call, compared with the one
 * digest comparison of Relaygram. Without ADMIN_TOKEN the API answers 404, as if absent.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly matcher: SecretMatcher | undefined;

  constructor(config: ConfigService) {
    const token = config.env.adminToken;
    this.matcher = token ? createSecretMatcher([token.reveal()]) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.matcher) throw new NotFoundException({ error: 'not found' });
    const http = context.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    // Answers carry bot states and updates users sent: no cache keeps them.
    void reply.header('Cache-Control', 'no-store');
    const header = http.getRequest<FastifyRequest>().headers.authorization;
    const presented = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
    if (this.matcher(presented) < 0) {
      void reply.header('WWW-Authenticate', 'Bearer realm="relaygram"');
      throw new UnauthorizedException({ error: 'unauthorized' });
    }
    return true;
  }
}
