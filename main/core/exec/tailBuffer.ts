// Keeps the last `limit` bytes of a stream: results carry the tail of the output, where errors usually are.
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit) {
      this.truncated = true;
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  /** UTF-8 text; invalid bytes (including a character cut by the tail) become U+FFFD. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
