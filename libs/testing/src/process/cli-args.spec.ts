import { CliArgs } from './cli-args';

describe('CliArgs', () => {
  it('walks flags and takes the next argument as a value', () => {
    const args = new CliArgs(['--quick', '--json', 'out.json']);
    expect(args.next()).toBe('--quick');
    expect(args.next()).toBe('--json');
    expect(args.valueOf('--json')).toBe('out.json');
    expect(args.next()).toBeUndefined();
  });

  it('takes an optional value only when the next argument is not a flag', () => {
    const args = new CliArgs(['--cpu-prof', '--quick', '--cpu-prof', 'dir']);
    args.next();
    expect(args.optionalValue()).toBeUndefined();
    expect(args.next()).toBe('--quick');
    args.next();
    expect(args.optionalValue()).toBe('dir');
    expect(args.next()).toBeUndefined();
  });

  it('refuses a missing value and a flag in place of a value', () => {
    expect(() => new CliArgs(['--json']).valueOf('--json')).toThrow('--json needs a value');
    const args = new CliArgs(['--json', '--quick']);
    args.next();
    expect(() => args.valueOf('--json')).toThrow('--json needs a value');
  });
});
