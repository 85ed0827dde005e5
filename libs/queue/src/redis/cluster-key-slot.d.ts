// cluster-key-slot ships no types; this declares the one function Relaygram uses.
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot of a key (CRC16 of its hash tag, or of the key), 0-16383. */
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
