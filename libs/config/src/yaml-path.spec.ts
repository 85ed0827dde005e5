import { formatPath } from './yaml-path';

describe('formatPath', () => {
  it('names plain keys with dots and indexes with brackets', () => {
    expect(formatPath(['routes', 2, 'target_url'])).toBe('routes[2].target_url');
  });

  it('quotes a key that is not a plain name, on one line', () => {
    expect(formatPath(['redis', 'x y'])).toBe('redis["x y"]');
    expect(formatPath(['{\n  ? # comment\n}'])).toBe('["{\\n  ? # comment\\n}"]');
    expect(formatPath(['bots', 0, 'k'.repeat(50)])).toBe('bots[0].' + 'k'.repeat(50));
    expect(formatPath(['bots', 0, 'é'.repeat(50)])).toBe(`bots[0]["${'é'.repeat(40)}…"]`);
  });
});
