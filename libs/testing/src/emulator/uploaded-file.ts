import { unlink } from 'node:fs/promises';
import type { UploadSummary } from './emulator.types';

/**
 * One multipart file part, already streamed to a temporary file and hashed. A method that
 * keeps it calls `adopt()`; the HTTP layer deletes every upload nobody adopted.
 */
export class UploadedFile {
  private adopted = false;

  constructor(
    readonly fieldName: string,
    readonly filename: string,
    readonly mimeType: string,
    readonly size: number,
    readonly sha256: string,
    readonly path: string,
  ) {}

  adopt(): void {
    this.adopted = true;
  }

  summary(): UploadSummary {
    return {
      filename: this.filename,
      size: this.size,
      sha256: this.sha256,
      mimeType: this.mimeType,
    };
  }

  async discardUnlessAdopted(): Promise<void> {
    if (this.adopted) return;
    await unlink(this.path).catch(() => undefined);
  }
}
