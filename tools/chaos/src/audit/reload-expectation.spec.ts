import { owedAcrossRemoval, owedAfterAddition } from './reload-expectation';

/** Reloads at 100-110 (route removed) and 200-210 (back); another added at 300-310. */
describe('what a route owes around reloads', () => {
  const removed = { start: 100, end: 110 };
  const back = { start: 200, end: 210 };
  const span = (from: number, to: number) => ({ from, to });

  it('owes deliveries of updates accepted before the removal or after the return', () => {
    expect(owedAcrossRemoval(span(90, 99), removed, back)).toBe('required');
    expect(owedAcrossRemoval(span(211, 215), removed, back)).toBe('required');
  });

  it('owes nothing for updates accepted while no process had the route', () => {
    expect(owedAcrossRemoval(span(111, 199), removed, back)).toBe('none');
  });

  it('leaves optional an update whose acceptance may have met either config', () => {
    expect(owedAcrossRemoval(span(95, 105), removed, back)).toBe('optional');
    expect(owedAcrossRemoval(span(90, 111), removed, back)).toBe('optional');
    expect(owedAcrossRemoval(span(150, 205), removed, back)).toBe('optional');
    // Never seen confirmed: it may have been accepted any time after its injection.
    expect(owedAcrossRemoval(span(150, Infinity), removed, back)).toBe('optional');
    expect(owedAcrossRemoval(span(95, Infinity), removed, back)).toBe('optional');
  });

  it('owes an added route nothing before its reload, everything after', () => {
    const added = { start: 300, end: 310 };
    expect(owedAfterAddition(span(250, 299), added)).toBe('none');
    expect(owedAfterAddition(span(299, 301), added)).toBe('optional');
    expect(owedAfterAddition(span(305, 320), added)).toBe('optional');
    expect(owedAfterAddition(span(311, 320), added)).toBe('required');
  });
});
