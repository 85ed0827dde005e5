import {
  COMMAND,
  isMapping,
  isReservedMethod,
  METHOD,
  NAME,
  NAME_RULE,
  UPDATE_TYPE,
} from './config-rules';
import type { ValueRule } from './field.decorators';

export const MAPPING_ITEM: ValueRule = (item) =>
  isMapping(item) ? undefined : 'must be a mapping';

export const NAME_ITEM: ValueRule = (item) =>
  typeof item === 'string' && NAME.test(item) ? undefined : NAME_RULE;

export const UPDATE_TYPE_ITEM: ValueRule = (item) =>
  typeof item === 'string' && UPDATE_TYPE.test(item)
    ? undefined
    : 'must be an update type of a-z and _, like message or callback_query';

export const ID_ITEM: ValueRule = (item) =>
  Number.isSafeInteger(item) ? undefined : 'must be an integer (a Telegram user or chat id)';

export const COMMAND_ITEM: ValueRule = (item) =>
  typeof item === 'string' && COMMAND.test(item)
    ? undefined
    : 'must be a slash and 1-32 letters, digits or _, like /start';

export const NON_EMPTY_STRING_ITEM: ValueRule = (item) =>
  typeof item === 'string' && item.length > 0 ? undefined : 'must be a non-empty string';

export const METHOD_ITEM: ValueRule = (item) => {
  if (typeof item !== 'string' || !METHOD.test(item)) {
    return 'must be a Bot API method name of letters only, like sendMessage';
  }
  return isReservedMethod(item)
    ? `${item} is reserved by the gateway: no client may call it`
    : undefined;
};
