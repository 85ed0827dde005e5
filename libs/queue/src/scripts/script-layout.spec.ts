import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import { scriptLayout, wireArg } from './script-layout';

const utf8 = Buffer.from('{"text":"caf\u00e9 \\"q\\" \ud83d\ude80","n":1.0,"id":9007199254740993}');
const cutMidCharacter = utf8.subarray(0, utf8.indexOf(0xf0) + 2);
const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41]);

describe('wireArg', () => {
  it('passes a Buffer of valid UTF-8 as its string', () => {
    const arg = wireArg(utf8);
    expect(typeof arg).toBe('string');
    expect(Buffer.from(arg as string, 'utf8').equals(utf8)).toBe(true);
  });

  it('keeps a Buffer that is not valid UTF-8 as it is', () => {
    expect(wireArg(cutMidCharacter)).toBe(cutMidCharacter);
    expect(wireArg(binary)).toBe(binary);
  });

  it('leaves strings and numbers alone, an empty Buffer becomes an empty string', () => {
    expect(wireArg('x')).toBe('x');
    expect(wireArg(7)).toBe(7);
    expect(wireArg(Buffer.alloc(0))).toBe('');
  });
});

describe('scriptLayout.encode on a real Redis', () => {
  const ECHO = scriptLayout({ keys: ['key'], args: ['first', 'second'] });
  let f: QueueFixture;

  beforeAll(async () => {
    f = await createQueueFixture('script-layout');
  });

  afterAll(async () => {
    await f.cleanup();
  });

  it.each([
    ['valid UTF-8', utf8],
    ['UTF-8 cut mid-character', cutMidCharacter],
    ['binary', binary],
  ])('a script receives the exact bytes of a Buffer argument: %s', async (_name, bytes) => {
    const call = ECHO.encode(
      { key: `${f.prefix}:echo`, first: bytes, second: 'plain' },
      undefined,
      {
        args: [bytes],
      },
    );
    const reply = (await f.redis.callBuffer(
      'EVAL',
      'return {ARGV[1], ARGV[2], ARGV[3]}',
      ...call,
    )) as Buffer[];
    expect(reply[0].equals(bytes)).toBe(true);
    expect(reply[1].toString()).toBe('plain');
    expect(reply[2].equals(bytes)).toBe(true);
  });
});
