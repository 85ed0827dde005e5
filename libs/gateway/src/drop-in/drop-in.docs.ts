import { routeConfig, TELEGRAM_ERROR_BODY, type ParameterDoc } from '@relaygram/openapi';
import { TELEGRAM_OK_BODY } from '../http/telegram-answer.docs';

const TOKEN: ParameterDoc = {
  type: 'string',
  pattern: '^[0-9]+:.+$',
  description:
    "`<botNumericId>:<clientToken>`: the number before the colon in the bot's real token, " +
    "then a client's token. It looks like a bot token to every framework.",
};

const TELEGRAM_ERROR = { description: 'Telegram-style error', schema: TELEGRAM_ERROR_BODY };
const PARAMETERS = {
  type: 'object',
  description: "The method's Bot API parameters",
  additionalProperties: true,
};

/**
 * `/bot<token>/<method>`: the Bot API as Telegram serves it. A framework needs only its
 * API root changed; its calls go through with the bot's real token added here.
 */
export const DROP_IN_METHOD_DOC = routeConfig({
  operationId: 'callBotApi',
  methods: { GET: 'callBotApiGet', POST: 'callBotApiPost' },
  documentedUrl: '/bot{token}/{method}',
  summary: 'Bot API drop-in: any method, as Telegram answers it',
  description:
    'Parameters in the query, or a JSON, urlencoded or multipart body, exactly as the Bot ' +
    "API takes them. Telegram's status and JSON are passed through and nothing is retried " +
    '(frameworks retry themselves). Reserved methods (getUpdates, setWebhook, ' +
    'deleteWebhook, logOut, close; case-insensitive) answer 403 `Forbidden: reserved by the ' +
    "gateway`, except a pull route's client's getUpdates, deleteWebhook and getWebhookInfo, " +
    'which Relaygram answers with Telegram semantics (409 for a second poller). The `/test/` ' +
    'environment path and a `method` parameter that names another method are refused.',
  tags: ['bot-api'],
  security: [],
  params: {
    token: TOKEN,
    method: { type: 'string', pattern: '^[A-Za-z]+$', description: 'A Bot API method name' },
  },
  body: {
    content: {
      'application/json': PARAMETERS,
      'application/x-www-form-urlencoded': PARAMETERS,
      'multipart/form-data': PARAMETERS,
    },
  },
  responses: {
    200: {
      description: "Telegram's answer",
      schema: TELEGRAM_OK_BODY,
    },
    400: TELEGRAM_ERROR,
    401: {
      description: 'The token matches no client for this bot: `Unauthorized`',
      schema: TELEGRAM_ERROR_BODY,
    },
    403: {
      description: 'A reserved method, a bot or method the client may not use, or /test/',
      schema: TELEGRAM_ERROR_BODY,
    },
    404: { description: 'No such method path: `Not Found`', schema: TELEGRAM_ERROR_BODY },
    409: { description: 'A second poller of a pull route', schema: TELEGRAM_ERROR_BODY },
    413: { description: 'The body is too large', schema: TELEGRAM_ERROR_BODY },
    429: {
      description:
        "Telegram's flood limit, or the bot's outbound pacing past its max_wait " +
        '(`parameters.retry_after`)',
      schema: TELEGRAM_ERROR_BODY,
    },
    default: { description: "Telegram's error, passed through", schema: TELEGRAM_ERROR_BODY },
  },
});

export const DROP_IN_FILE_DOC = routeConfig({
  operationId: 'downloadFile',
  methods: { GET: 'downloadFile' },
  documentedUrl: '/file/bot{token}/{file_path}',
  summary: 'Bot API drop-in: download a file by its file_path (from getFile)',
  tags: ['bot-api'],
  security: [],
  params: {
    token: TOKEN,
    file_path: {
      type: 'string',
      description: 'The file_path getFile answered; it may contain `/`, sent as it is',
    },
  },
  responses: {
    200: {
      description: 'The file, as Telegram serves it',
      contentType: 'application/octet-stream',
      schema: { type: 'string', contentMediaType: 'application/octet-stream' },
    },
    401: TELEGRAM_ERROR,
    403: TELEGRAM_ERROR,
    404: TELEGRAM_ERROR,
    default: { description: "Telegram's error, passed through", schema: TELEGRAM_ERROR_BODY },
  },
});
