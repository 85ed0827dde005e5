import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PaceResult } from '@relaygram/pacing';
import type { GatewayAccess } from '../access/request-access';
import { logCall } from '../http/call-log';
import { callerSignal, type CallerSignal } from '../http/caller-signal';
import { sendAnswer } from '../http/http-answer';
import { requestFingerprint, type OwnedKey } from '../idempotency/idempotency-store';
import {
  runMultipartCall,
  type AnnouncedFile,
  type EarlyAnswer,
  type MultipartPlan,
} from '../uploads/multipart-call';
import {
  callTelegram,
  failure,
  paceRefusal,
  reportTelegram429,
  type CallAnswer,
  type RestRoute,
} from './rest-call';
import { answerOnce, beginKey, claimAnswer, finishOwned } from './rest-idempotency';

/** A multipart REST call: its route, the key it runs under and how its fields are checked. */
export interface RestUpload {
  route: RestRoute;
  access: GatewayAccess;
  key: string | undefined;
  /** The path the request's fingerprint names. */
  path: string;
  prepare: MultipartPlan['prepare'];
}

/**
 * A REST upload: the file streamed to Telegram once its text fields passed, its key
 * taken and its slot given; a body with no file is an ordinary call.
 */
export async function restUpload(
  upload: RestUpload,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { route, access } = upload;
  const { deps } = route;
  const admission = new UploadAdmission(upload, callerSignal(reply));
  const outcome = await runMultipartCall(request, access.telegram, {
    method: access.method,
    limitBytes: deps.telegram.options.uploadLimitBytes,
    timeoutMs: deps.telegram.options.uploadTimeoutMs,
    prepare: upload.prepare,
    admit: (params, file) => admission.admit(params, file),
  });
  switch (outcome.kind) {
    case 'refused':
      await admission.owned?.release();
      return reply.code(outcome.status).send({ error: outcome.error });
    case 'answered':
      return sendAnswer(reply, outcome.answer);
    case 'fields-only': {
      const params = outcome.params;
      const fingerprint = () => requestFingerprint(upload.path, params);
      return answerOnce(deps, access, reply, upload.key, fingerprint, (signal) =>
        callTelegram(route, access, reply, params, 'json', signal),
      );
    }
    case 'done': {
      logCall(deps.logger, false, access, 200);
      const done: CallAnswer = {
        status: 200,
        body: route.answer(outcome.result),
        reachedTelegram: true,
      };
      return finishOwned(reply, admission.owned, done);
    }
    case 'failed': {
      const pace = admission.pace;
      if (pace?.kind === 'go') await reportTelegram429(deps, access, pace, outcome.error);
      return finishOwned(reply, admission.owned, failure(deps, access, outcome.error));
    }
  }
}

/** What an upload holds once its fields passed: its key, then its slot. */
class UploadAdmission {
  owned: OwnedKey | undefined;
  pace: PaceResult | undefined;

  constructor(
    private readonly upload: RestUpload,
    private readonly signal: CallerSignal,
  ) {}

  async admit(
    params: Record<string, unknown>,
    file: AnnouncedFile,
  ): Promise<EarlyAnswer | undefined> {
    const { route, access, key } = this.upload;
    if (key !== undefined) {
      const fingerprint = requestFingerprint(this.upload.path, { params, file });
      const claim = await beginKey(route.deps, access, key, fingerprint, this.signal);
      if (claim.kind !== 'proceed') return claimAnswer(claim);
      this.owned = claim;
    }
    this.pace = await route.deps.pacing.pace(access.bot, access.method, params, this.signal);
    const refusal = paceRefusal(access, this.pace);
    if (!refusal) return undefined;
    await this.owned?.release();
    this.owned = undefined;
    return { status: refusal.status, body: refusal.body, headers: refusal.headers };
  }
}
