import { BROADCAST_FAILURE_REASONS, BROADCAST_MAX_RECIPIENTS } from '@relaygram/contracts';
import {
  BOT_ID_PARAM,
  BROADCAST_FAILURE,
  BROADCAST_STATUS,
  BROADCAST_VIEW,
  type JsonSchema,
  type ParameterDoc,
} from '@relaygram/openapi';
import { ADMIN_ERROR, adminDoc } from './admin-api.docs';
import { NAME } from './admin-names.docs';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './admin-params';
import { BROADCAST_LIST_MAX_OFFSET } from './broadcast-params';

/** A broadcast as its client sees it, with its bot and client. */
const BROADCAST: JsonSchema = {
  ...BROADCAST_VIEW,
  required: ['bot', 'client', ...(BROADCAST_VIEW.required as string[])],
  properties: {
    bot: { type: 'string' },
    client: { type: 'string', description: 'The client that started it' },
    ...(BROADCAST_VIEW.properties as Record<string, JsonSchema>),
  },
};

const PARAMS: Record<string, ParameterDoc> = {
  bot: BOT_ID_PARAM,
  id: { type: 'string', description: 'The id its start answered' },
};
const LIMIT: ParameterDoc = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_PAGE_SIZE,
  default: DEFAULT_PAGE_SIZE,
};
const BAD_QUERY = { description: 'A bad parameter (`parameter` names it)', schema: ADMIN_ERROR };

const CONFLICT: JsonSchema = {
  ...ADMIN_ERROR,
  required: ['error', 'status'],
  properties: {
    error: { type: 'string', description: 'Names the status and what the action needs' },
    status: BROADCAST_STATUS,
  },
};

function control(action: 'pause' | 'resume' | 'cancel', summary: string, allowed: string) {
  return adminDoc({
    operationId: `${action}Broadcast`,
    summary,
    description: `Allowed when the broadcast is ${allowed}; answers it after.`,
    params: PARAMS,
    responses: {
      200: { description: 'Done: the broadcast with its new status', schema: BROADCAST },
      409: { description: `The broadcast is not ${allowed}`, schema: CONFLICT },
    },
  });
}

export const BROADCAST_DOCS = {
  list: adminDoc({
    operationId: 'listBroadcasts',
    summary: "Every configured bot's broadcasts (or one bot's), newest first, with their progress",
    description:
      'A broadcast is listed from its start until 7 days after it ends; one whose recipients are still arriving is not.',
    query: {
      bot: { ...NAME, description: 'Only this bot (a bot removed from the config too)' },
      limit: LIMIT,
      offset: { type: 'integer', minimum: 0, maximum: BROADCAST_LIST_MAX_OFFSET, default: 0 },
    },
    responses: {
      200: {
        description: 'A page',
        schema: {
          type: 'object',
          required: ['items', 'next_offset'],
          properties: {
            items: { type: 'array', items: BROADCAST },
            next_offset: { type: ['integer', 'null'], description: 'Pass it as offset' },
          },
        },
      },
      400: BAD_QUERY,
    },
  }),
  one: adminDoc({
    operationId: 'getBroadcast',
    summary: 'One broadcast with its progress',
    params: PARAMS,
    responses: { 200: { description: 'The broadcast', schema: BROADCAST } },
  }),
  pause: control('pause', 'Pause a broadcast: no recipient is claimed until it resumes', 'running'),
  resume: control('resume', 'Resume a paused broadcast where it stopped', 'paused'),
  cancel: control(
    'cancel',
    'Cancel a broadcast: its pending recipients are never sent',
    'running or paused',
  ),
  failures: adminDoc({
    operationId: 'listBroadcastFailures',
    summary: 'Recipients of a broadcast that were not sent, in the order they ended',
    params: PARAMS,
    query: {
      reason: {
        enum: [...BROADCAST_FAILURE_REASONS],
        default: 'blocked',
        description: 'blocked (Telegram answered 403) or failed (any other refusal)',
      },
      offset: { type: 'integer', minimum: 0, maximum: BROADCAST_MAX_RECIPIENTS, default: 0 },
      limit: LIMIT,
    },
    responses: {
      200: {
        description: 'A page',
        schema: {
          type: 'object',
          required: ['bot', 'id', 'reason', 'total', 'items', 'next_offset'],
          properties: {
            bot: { type: 'string' },
            id: { type: 'string' },
            reason: { enum: [...BROADCAST_FAILURE_REASONS] },
            total: {
              type: 'integer',
              minimum: 0,
              description: 'Recipients that ended with this reason',
            },
            items: { type: 'array', items: BROADCAST_FAILURE },
            next_offset: { type: ['integer', 'null'], description: 'Pass it as offset' },
          },
        },
      },
      400: BAD_QUERY,
    },
  }),
};
