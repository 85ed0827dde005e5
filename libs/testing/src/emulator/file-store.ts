import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { UploadedFile } from './uploaded-file';

export type FileKind = 'photo' | 'document';

export interface StoredFile {
  fileId: string;
  fileUniqueId: string;
  kind: FileKind;
  botId: number;
  /** Relative path served under /file/bot<token>/. */
  filePath: string;
  /** Where the bytes are; absent for files sent by URL, which the emulator never fetches. */
  diskPath?: string;
  url?: string;
  size?: number;
  sha256?: string;
  filename?: string;
  mimeType?: string;
  width?: number;
  height?: number;
}

/** Prefixes of real file ids by kind, so ids look like Telegram's. */
const FILE_ID_PREFIX: Record<FileKind, string> = { photo: 'AgACAgIAAxk', document: 'BQACAgIAAxk' };

/**
 * Files the bots uploaded. Uploads are streamed to a temporary directory of this emulator
 * (never held in memory), served back by /file/bot<token>/<file_path>, and removed by
 * `clear()` and when the emulator stops. A process killed with SIGKILL leaves its directory
 * under the OS temp dir, named relaygram-emulator-*.
 */
export class FileStore {
  private directory: Promise<string> | undefined;
  private readonly byId = new Map<string, StoredFile>();
  private readonly byPath = new Map<string, StoredFile>();
  private uploadCount = 0;
  private fileCount = 0;

  /** A fresh path in the emulator's temporary directory for an upload to stream into. */
  async tempPath(): Promise<string> {
    this.directory ??= mkdtemp(join(tmpdir(), 'relaygram-emulator-'));
    return join(
      await this.directory,
      `upload-${++this.uploadCount}-${randomBytes(6).toString('hex')}`,
    );
  }

  addUpload(
    botId: number,
    kind: FileKind,
    upload: UploadedFile,
    dimensions?: { width: number; height: number },
  ): StoredFile {
    upload.adopt();
    return this.add({
      ...this.newIdentity(botId, kind, upload.filename),
      diskPath: upload.path,
      size: upload.size,
      sha256: upload.sha256,
      filename: upload.filename,
      mimeType: upload.mimeType,
      ...dimensions,
    });
  }

  addUrl(botId: number, kind: FileKind, url: string): StoredFile {
    const name = safeName(new URL(url).pathname.split('/').pop() ?? '');
    return this.add({ ...this.newIdentity(botId, kind, name), url, filename: name || undefined });
  }

  get(botId: number, fileId: string): StoredFile | undefined {
    const file = this.byId.get(fileId);
    return file && file.botId === botId ? file : undefined;
  }

  getByPath(botId: number, filePath: string): StoredFile | undefined {
    return this.byPath.get(`${botId}/${filePath}`);
  }

  /** Forgets every file and deletes the temporary directory. */
  async clear(): Promise<void> {
    this.byId.clear();
    this.byPath.clear();
    const directory = this.directory;
    this.directory = undefined;
    if (directory) {
      await rm(await directory, { recursive: true, force: true });
    }
  }

  private newIdentity(botId: number, kind: FileKind, filename: string) {
    const n = this.fileCount++;
    const extension = kind === 'photo' ? '.jpg' : documentExtension(filename);
    return {
      fileId: FILE_ID_PREFIX[kind] + randomBytes(48).toString('base64url'),
      fileUniqueId: 'AQAD' + randomBytes(9).toString('base64url'),
      kind,
      botId,
      filePath: `${kind === 'photo' ? 'photos' : 'documents'}/file_${n}${extension}`,
    };
  }

  private add(file: StoredFile): StoredFile {
    this.byId.set(file.fileId, file);
    this.byPath.set(`${file.botId}/${file.filePath}`, file);
    return file;
  }
}

function safeName(name: string): string {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // A malformed escape is kept as sent.
  }
  return decoded.replace(/[^\w.-]/g, '_');
}

function documentExtension(filename: string): string {
  const extension = extname(filename).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(extension) ? extension : '';
}
