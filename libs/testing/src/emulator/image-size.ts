export interface ImageSize {
  width: number;
  height: number;
}

/** Dimensions of a PNG, GIF or JPEG from its first bytes; undefined for anything else. */
export function sniffImageSize(head: Buffer): ImageSize | undefined {
  if (head.length >= 24 && head.readUInt32BE(0) === 0x89504e47) {
    return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  }
  if (head.length >= 10 && head.toString('latin1', 0, 3) === 'GIF') {
    return { width: head.readUInt16LE(6), height: head.readUInt16LE(8) };
  }
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xd8) return jpegSize(head);
  return undefined;
}

/** Walks JPEG segments up to the first start-of-frame marker, which carries the size. */
function jpegSize(head: Buffer): ImageSize | undefined {
  let offset = 2;
  while (offset + 9 < head.length) {
    if (head[offset] !== 0xff) return undefined;
    const marker = head[offset + 1] as number;
    if (marker === 0xff) {
      offset++;
      continue;
    }
    const isStartOfFrame =
      marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isStartOfFrame) {
      return { height: head.readUInt16BE(offset + 5), width: head.readUInt16BE(offset + 7) };
    }
    offset += 2 + head.readUInt16BE(offset + 2);
  }
  return undefined;
}
