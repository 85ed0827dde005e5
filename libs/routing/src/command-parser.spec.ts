import { command } from './command-parser';
import { UPDATE_SAMPLES, VARIANT_SAMPLES } from './fixtures/updates.fixture';
import type { Update } from './update.types';

const BOT = 'ThisBot';

function textUpdate(
  text: unknown,
  entities: unknown = [{ offset: 0, length: commandLength(text), type: 'bot_command' }],
  type = 'message',
): Update {
  return {
    update_id: 1,
    [type]: {
      message_id: 7,
      from: { id: 123456789, is_bot: false, first_name: 'Alice' },
      chat: { id: -1001234567890, type: 'supergroup', title: 'Shop Team' },
      date: 1732874400,
      text,
      entities,
    },
  };
}

/** What Telegram marks as the command: up to the first space. */
function commandLength(text: unknown): number {
  if (typeof text !== 'string') return 0;
  const space = text.indexOf(' ');
  return space === -1 ? text.length : space;
}

describe('command', () => {
  it.each<[string, string | undefined, string | undefined]>([
    ['/admin', BOT, '/admin'],
    ['/admin', undefined, '/admin'],
    ['/admin list all', BOT, '/admin'],
    ['/ADMIN', BOT, '/admin'],
    ['/admin@thisbot', BOT, '/admin'],
    ['/ADMIN@ThisBot', BOT, '/admin'],
    ['/admin@THISBOT now', 'thisbot', '/admin'],
    ['/admin@ThisBot', '@ThisBot', '/admin'],
    ['/admin@otherbot', BOT, undefined],
    ['/admin@ThisBotX', BOT, undefined],
    ['/admin@ThisBo', BOT, undefined],
    ['/admin@ThisBot', undefined, undefined],
    ['/admin@ThisBot', '', undefined],
    ['/admin@', BOT, undefined],
    ['/@ThisBot', BOT, undefined],
    ['/', BOT, undefined],
  ])('%j with username %j is %j', (text, username, expected) => {
    expect(command(textUpdate(text), username)).toBe(expected);
  });

  it('is not a command when it does not open the text', () => {
    const update = textUpdate('x /admin', [{ offset: 2, length: 6, type: 'bot_command' }]);
    expect(command(update, BOT)).toBeUndefined();
  });

  it('needs a bot_command entity, not just a leading slash', () => {
    expect(command(textUpdate('/admin', []), BOT)).toBeUndefined();
    expect(
      command(textUpdate('/admin', [{ offset: 0, length: 6, type: 'bold' }]), BOT),
    ).toBeUndefined();
    const noEntities = textUpdate('/admin', null);
    expect(command(noEntities, BOT)).toBeUndefined();
  });

  it('finds the command entity among overlapping ones', () => {
    const update = textUpdate('/admin now', [
      { offset: 0, length: 10, type: 'bold' },
      { offset: 0, length: 6, type: 'bot_command' },
    ]);
    expect(command(update, BOT)).toBe('/admin');
  });

  it('takes the command length from the entity', () => {
    const update = textUpdate('/orders_today', [{ offset: 0, length: 7, type: 'bot_command' }]);
    expect(command(update, BOT)).toBe('/orders');
  });

  it('rejects an entity longer than the text', () => {
    const update = textUpdate('/adm', [{ offset: 0, length: 6, type: 'bot_command' }]);
    expect(command(update, BOT)).toBeUndefined();
  });

  it('reads a caption command', () => {
    expect(command(VARIANT_SAMPLES.captionCommand, BOT)).toBe('/report');
    expect(command(VARIANT_SAMPLES.captionCommand, 'otherbot')).toBeUndefined();
  });

  it('reads the message sample', () => {
    expect(command(UPDATE_SAMPLES.message, BOT)).toBe('/orders');
    expect(command(VARIANT_SAMPLES.privateCommand)).toBe('/start');
  });

  it.each([
    'edited_message',
    'channel_post',
    'edited_channel_post',
    'business_message',
    'edited_business_message',
    'guest_message',
  ])('reads commands in %s', (type) => {
    expect(command(textUpdate('/help@ThisBot', undefined, type), BOT)).toBe('/help');
  });

  it.each(['callback_query', 'inline_query', 'poll', 'story_reply'])(
    'finds no command in %s, even one shaped like a message',
    (type) => {
      expect(command(textUpdate('/help', undefined, type), BOT)).toBeUndefined();
    },
  );

  it('keeps non-ASCII usernames from matching by accident', () => {
    expect(command(textUpdate('/admin@ThisBöt'), 'ThisBot')).toBeUndefined();
  });

  it.each<[string, Update]>([
    ['text as a number', textUpdate(42, [{ offset: 0, length: 2, type: 'bot_command' }])],
    ['entities as an object', textUpdate('/admin', { 0: { offset: 0, length: 6 } })],
    ['an entity as a string', textUpdate('/admin', ['bot_command'])],
    ['length as a string', textUpdate('/admin', [{ offset: 0, length: '6', type: 'bot_command' }])],
    ['a negative length', textUpdate('/admin', [{ offset: 0, length: -3, type: 'bot_command' }])],
    [
      'a fractional length',
      textUpdate('/admin', [{ offset: 0, length: 2.5, type: 'bot_command' }]),
    ],
    ['offset as a string', textUpdate('/admin', [{ offset: '0', length: 6, type: 'bot_command' }])],
    ['message as a string', { update_id: 1, message: '/admin' }],
    ['message as null', { update_id: 1, message: null }],
    ['caption without entities', { update_id: 1, message: { caption: '/admin' } }],
  ])('finds nothing in %s', (_name, update) => {
    expect(command(update, BOT)).toBeUndefined();
  });
});
