// Policy networks shared by the agents that play one checkpoint, and kept a while after the last
// lets go. TF.js keeps every layer name it ever made unique in a registry it never empties, so
// each network built leaks ~2 KB for good: a server whose client loaded and closed a checkpoint
// in a loop grew without bound. A checkpoint is known by its two files' hashes (checked against
// the bytes before a network is built), so equal networks are built once.

import type * as tf from '@tensorflow/tfjs';

interface Entry {
  model: Promise<tf.LayersModel>;
  users: number;
  bytes: number;
}

export class SharedModels {
  /** In least recently used order (a Map keeps insertion order; a use moves its key to the end). */
  private readonly entries = new Map<string, Entry>();

  /**
   * @param maxIdle networks kept when no agent uses them.
   * @param maxIdleBytes their weights' bytes at most, together.
   */
  constructor(
    private readonly maxIdle = 8,
    private readonly maxIdleBytes = 64 << 20,
  ) {}

  /**
   * The network of `key`, built by `build` when none is kept; `release` hands it back (once).
   * Callers must not change its weights: other agents play it.
   */
  async acquire(key: string, bytes: number, build: () => Promise<tf.LayersModel>): Promise<{ model: tf.LayersModel; release: () => void }> {
    let entry = this.entries.get(key);
    if (entry) this.entries.delete(key);
    else entry = { model: build(), users: 0, bytes };
    this.entries.set(key, entry);
    entry.users++;
    let model: tf.LayersModel;
    try {
      model = await entry.model;
    } catch (e) {
      // A build that failed is forgotten: the next load builds (and checks) again.
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw e;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      entry.users--;
      this.evictIdle();
    };
    return { model, release };
  }

  /** How many networks are kept (in use or idle). */
  get size(): number {
    return this.entries.size;
  }

  private evictIdle(): void {
    const idle = [...this.entries].filter(([, e]) => e.users === 0);
    let idleBytes = idle.reduce((sum, [, e]) => sum + e.bytes, 0);
    // The least recently used go first.
    while (idle.length > 0 && (idle.length > this.maxIdle || idleBytes > this.maxIdleBytes)) {
      const [key, entry] = idle.shift()!;
      this.entries.delete(key);
      idleBytes -= entry.bytes;
      void entry.model.then((model) => model.dispose(), () => undefined);
    }
  }
}
