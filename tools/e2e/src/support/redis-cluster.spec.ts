import { replicaPorts, slotOwner } from './redis-cluster';

// CLUSTER NODES of a 3-master cluster with a replica each, right after 30001 failed and
// its replica 30005 took its slots over (the format of Redis 7).
const NODES = `
a1 127.0.0.1:30001@40001 master,fail - 1700000000000 1699999990000 1 disconnected
a2 127.0.0.1:30002@40002 myself,master - 0 1700000001000 2 connected 5461-10922
a3 127.0.0.1:30003@40003 master - 0 1700000001000 3 connected 10923-16382 16383
b1 127.0.0.1:30004@40004 slave a2 0 1700000001000 2 connected
b2 127.0.0.1:30005@40005 master - 0 1700000001000 7 connected 0-5460 [93->-a3]
b3 127.0.0.1:30006@40006 slave a3 0 1700000001000 3 connected
`;

describe('slotOwner', () => {
  it('finds the master serving a slot in a range, at either end, or named alone', () => {
    expect(slotOwner(NODES, 0)).toBe(30005);
    expect(slotOwner(NODES, 5460)).toBe(30005);
    expect(slotOwner(NODES, 5461)).toBe(30002);
    expect(slotOwner(NODES, 16382)).toBe(30003);
    expect(slotOwner(NODES, 16383)).toBe(30003);
    expect(slotOwner(NODES, 7438)).toBe(30002);
  });

  it('skips a failed master, and answers undefined while no master serves the slot', () => {
    const failedOnly = NODES.replace('disconnected', 'disconnected 0-5460').replace(
      ' 0-5460 [93->-a3]',
      '',
    );
    expect(slotOwner(failedOnly, 100)).toBeUndefined();
  });
});

describe('replicaPorts', () => {
  it('lists the replicas of a master by its id', () => {
    expect(replicaPorts(NODES, 30002)).toEqual([30004]);
    expect(replicaPorts(NODES, 30003)).toEqual([30006]);
  });

  it('is empty for a master without replicas, and for a port no node has', () => {
    expect(replicaPorts(NODES, 30005)).toEqual([]);
    expect(replicaPorts(NODES, 39999)).toEqual([]);
  });
});
