import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export interface GeneratedStream {
  stream: Readable;
  /** Bytes handed out so far. */
  produced(): number;
  /** sha256 of everything produced; complete once the stream has ended. */
  sha256(): string;
}

/** Random bytes made only when the consumer asks for them, hashed as they go. */
export function generatedStream(total: number, chunkSize = 64 * 1024): GeneratedStream {
  const hash = createHash('sha256');
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced >= total) {
        this.push(null);
        return;
      }
      const chunk = randomBytes(Math.min(chunkSize, total - produced));
      produced += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, produced: () => produced, sha256: () => hash.copy().digest('hex') };
}
