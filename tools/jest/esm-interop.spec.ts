import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { TerminusModule } from '@nestjs/terminus';
import { ConfigService } from '@relaygram/config';

@Controller()
class ProbeController {
  @Get('/probe')
  probe() {
    return { ok: true };
  }
}

@Module({ imports: [TerminusModule], controllers: [ProbeController] })
class ProbeModule {}

// NestJS 12 ships ES modules only; this proves the test setup can load and run it.
it('boots a NestJS 12 Fastify app under Jest', async () => {
  expect(typeof ConfigService).toBe('function');
  const app = await NestFactory.create<NestFastifyApplication>(ProbeModule, new FastifyAdapter(), {
    logger: false,
  });
  await app.init();
  const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/probe' });
  expect(res.json()).toEqual({ ok: true });
  await app.close();
});
