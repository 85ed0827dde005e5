import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForSecrets } from './secret-scan';

/** The chaos run's last check: a secret anywhere in the output fails the run. */
describe('scanForSecrets', () => {
  let dir: string;
  const token = '123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQr';
  const secret = 'c2VjcmV0LXNpZ25pbmcta2V5LWZvci1jaGFvcw';
  const secrets = [
    { name: 'BOT_TOKEN', value: token },
    { name: 'SIGNING_SECRET', value: secret },
  ];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'chaos-scan-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds nothing in clean output', () => {
    writeFileSync(join(dir, 'app.log'), '{"msg":"delivered","path":"/bot123456789:***/getMe"}\n');
    expect(scanForSecrets(dir, secrets)).toEqual([]);
  });

  it('finds a secret as is and URL-encoded, in nested directories, naming the variable only', () => {
    mkdirSync(join(dir, 'redis-data'));
    writeFileSync(join(dir, 'app.log'), `GET /bot${token}/getMe\n`);
    writeFileSync(join(dir, 'redis-data', 'aof'), `x ${encodeURIComponent(token)} y ${secret}`);
    const findings = scanForSecrets(dir, secrets);
    expect(findings).toEqual(
      expect.arrayContaining([
        { secret: 'BOT_TOKEN', file: 'app.log', count: 1 },
        { secret: 'BOT_TOKEN', file: join('redis-data', 'aof'), count: 1 },
        { secret: 'SIGNING_SECRET', file: join('redis-data', 'aof'), count: 1 },
      ]),
    );
    expect(JSON.stringify(findings)).not.toContain(secret);
  });

  it('finds a secret across the boundary of two read chunks, once', () => {
    const chunk = 8 * 1024 * 1024;
    const text = Buffer.alloc(chunk + 100, 'x');
    Buffer.from(secret).copy(text, chunk - 10);
    writeFileSync(join(dir, 'big.log'), text);
    expect(scanForSecrets(dir, secrets)).toEqual([
      { secret: 'SIGNING_SECRET', file: 'big.log', count: 1 },
    ]);
  });
});
