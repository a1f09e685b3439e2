/**
 * The last `limit` bytes a terminal wrote, as ACP wants them: cut from the front when over, at a
 * character boundary, and said to be truncated.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      this.dropped = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  read(): { text: string; truncated: boolean } {
    let bytes = Buffer.concat(this.chunks, this.size);
    if (this.dropped) {
      // A character the cut went through starts with continuation bytes (10xxxxxx): drop them.
      let start = 0;
      while (start < bytes.length && start < 3 && (bytes[start]! & 0xc0) === 0x80) start += 1;
      bytes = bytes.subarray(start);
    }
    return { text: bytes.toString("utf8"), truncated: this.dropped };
  }
}
