import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { instructionsOf, parseDockerfile } from './dockerfile-parser';

const REPO = join(__dirname, '..', '..', '..', '..');
const dockerfile = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
const [build, runtime] = dockerfile.stages;

describe('Dockerfile', () => {
  it('has a build stage and a runtime stage on the same Node image', () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    expect(build.from).toBe(runtime.from);
    expect(dockerfile.globals).toContainEqual({
      keyword: 'ARG',
      args: expect.stringMatching(/^NODE_IMAGE=node:(20|22)/),
    });
  });

  it('builds every project in the build stage, install scripts off', () => {
    const runs = instructionsOf(build, 'RUN').join('\n');
    expect(runs).toMatch(/npm ci --ignore-scripts/);
    expect(runs).toMatch(/nx run-many -t build/);
  });

  it('builds any app by build arg, standalone by default', () => {
    expect(instructionsOf(runtime, 'ARG')).toContain('APP=standalone');
    expect(instructionsOf(runtime, 'ENV').join(' ')).toMatch(/APP=\$\{APP\}/);
    expect(instructionsOf(runtime, 'CMD')).toEqual([
      '["sh", "-c", "exec node apps/${APP}/dist/main.js"]',
    ]);
  });

  it('installs production dependencies only, without scripts, in the runtime stage', () => {
    const runs = instructionsOf(runtime, 'RUN');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^npm ci --omit=dev --ignore-scripts(\s|$)/);
    expect(instructionsOf(runtime, 'COPY')).toEqual(['--from=build /out ./']);
    expect(instructionsOf(runtime, 'ENV').join(' ')).toMatch(/NODE_ENV=production/);
  });

  it('runs as the unprivileged node user, after the install', () => {
    const keywords = runtime.instructions.map((i) => i.keyword);
    expect(instructionsOf(runtime, 'USER')).toEqual(['node']);
    expect(keywords.indexOf('USER')).toBeGreaterThan(keywords.indexOf('RUN'));
  });

  it("checks health on /health/live at the app's own port", () => {
    const [check] = instructionsOf(runtime, 'HEALTHCHECK');
    expect(check).toMatch(/--interval=\d+s/);
    expect(check).toContain('/health/live');
    // Without PORT each app listens on its own default (SPEC section 1).
    expect(check).toContain('gateway:3001');
    expect(check).toContain('dispatcher:3002');
    expect(check).toContain('||3000');
  });
});
