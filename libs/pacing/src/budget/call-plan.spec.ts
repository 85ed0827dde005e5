import { callCost, chatTarget, isPacedMethod, MAX_CALL_COST, planCall } from './call-plan';

describe('isPacedMethod', () => {
  it.each([
    'sendMessage',
    'SENDMESSAGE',
    'sendPhoto',
    'sendMediaGroup',
    'sendPoll',
    'sendInvoice',
    'copyMessage',
    'copyMessages',
    'forwardMessage',
    'forwardMessages',
    'editMessageText',
    'editMessageReplyMarkup',
    'editMessageMedia',
  ])('paces %s: it sends or edits a message', (method) => {
    expect(isPacedMethod(method)).toBe(true);
  });

  it.each([
    'sendChatAction',
    'sendchataction',
    'getMe',
    'getChat',
    'getFile',
    'answerCallbackQuery',
    'deleteMessage',
    'editForumTopic',
    'editChatInviteLink',
    'setMyCommands',
    'copyTextToClipboard',
  ])('leaves %s alone: it sends no message', (method) => {
    expect(isPacedMethod(method)).toBe(false);
  });
});

describe('chatTarget', () => {
  it.each([
    [42, { key: '42', kind: 'private' }],
    ['42', { key: '42', kind: 'private' }],
    [' 42 ', { key: '42', kind: 'private' }],
    [-1001234567890, { key: '-1001234567890', kind: 'group' }],
    ['-1001234567890', { key: '-1001234567890', kind: 'group' }],
    ['-00123', { key: '-123', kind: 'group' }],
    ['@MyChannel', { key: '@mychannel', kind: 'group' }],
    [12345678901234567890n, { key: '12345678901234567890', kind: 'private' }],
  ])('reads %p as %p', (chatId, target) => {
    expect(chatTarget(chatId)).toEqual(target);
  });

  it.each([0, '0', 1.5, '1.5', 'abc', '@', '@bad name', '', null, undefined, {}, [42], NaN])(
    'gives %p no chat budget',
    (chatId) => {
      expect(chatTarget(chatId)).toBeUndefined();
    },
  );

  it('never lets a key carry a character that could split a Redis key', () => {
    for (const value of ['@a:b', '1:2', '@x y', '1\n', '@{tag}']) {
      const target = chatTarget(value);
      if (target) expect(target.key).toMatch(/^(-?\d+|@[a-z0-9_]+)$/);
    }
  });
});

describe('callCost', () => {
  it('counts an album by its items, as JSON or as text', () => {
    const media = [
      { type: 'photo', media: 'a' },
      { type: 'photo', media: 'b' },
      { type: 'photo', media: 'c' },
    ];
    expect(callCost('sendMediaGroup', { media })).toBe(3);
    expect(callCost('sendMediaGroup', { media: JSON.stringify(media) })).toBe(3);
  });

  it('counts an unreadable album as the largest one', () => {
    expect(callCost('sendMediaGroup', { media: '[not json' })).toBe(10);
    expect(callCost('sendMediaGroup', {})).toBe(10);
  });

  it('counts batch copies and forwards by their messages, capped', () => {
    expect(callCost('forwardMessages', { message_ids: [1, 2, 3, 4] })).toBe(4);
    expect(callCost('copyMessages', { message_ids: '[5,6]' })).toBe(2);
    const many = Array.from({ length: 500 }, (_, i) => i);
    expect(callCost('copyMessages', { message_ids: many })).toBe(MAX_CALL_COST);
  });

  it('counts every other call once', () => {
    expect(callCost('sendMessage', { media: [1, 2, 3] })).toBe(1);
  });
});

describe('planCall', () => {
  it('plans a paced call with its chat and cost', () => {
    expect(planCall('sendMessage', { chat_id: -100, text: 'x' })).toEqual({
      paced: true,
      chat: { key: '-100', kind: 'group' },
      cost: 1,
    });
  });

  it('plans an inline edit with no chat: the bot budget alone', () => {
    expect(planCall('editMessageText', { inline_message_id: 'abc', text: 'x' })).toEqual({
      paced: true,
      cost: 1,
    });
  });

  it('does not pace what sends nothing', () => {
    expect(planCall('sendChatAction', { chat_id: 1, action: 'typing' })).toEqual({
      paced: false,
      cost: 0,
    });
  });

  it('names the destination of a forward, not its source', () => {
    expect(
      planCall('forwardMessage', { chat_id: 7, from_chat_id: -9, message_id: 1 }).chat,
    ).toEqual({ key: '7', kind: 'private' });
  });
});
