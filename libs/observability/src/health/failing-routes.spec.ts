import { parseRouteFailing } from './failing-routes';

describe('parseRouteFailing', () => {
  const entry = {
    status: 401,
    error: 'HTTP 401',
    body: 'expired',
    since: '2026-12-02T10:42:00.000Z',
    last_at: '2026-12-02T10:47:00.000Z',
    attempts: 6,
  };

  it('reads what the dispatcher wrote', () => {
    expect(parseRouteFailing(JSON.stringify(entry))).toEqual(entry);
    expect(parseRouteFailing(JSON.stringify({ ...entry, status: null, error: 'timeout' }))).toEqual(
      { ...entry, status: null, error: 'timeout' },
    );
  });

  it('never shows more than 200 characters of the answer, nor a value it cannot read', () => {
    expect(
      parseRouteFailing(JSON.stringify({ ...entry, body: 'x'.repeat(500) }))!.body,
    ).toHaveLength(200);
    expect(parseRouteFailing(undefined)).toBeUndefined();
    expect(parseRouteFailing('not json')).toBeUndefined();
    expect(parseRouteFailing(JSON.stringify({ status: 401 }))).toBeUndefined();
  });
});
