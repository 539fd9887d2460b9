// Policy networks shared by the agents that play one checkpoint, kept a while after the last
// lets go, and reused for other checkpoints of the same shape. TF.js keeps every layer name it
// ever made unique in a registry it never empties, so each network built leaks ~2 KB for good:
// a server whose client loaded and closed checkpoints in a loop grew without bound. A checkpoint
// is known by its two files' hashes (checked against the bytes before a network is built), so
// equal networks are built once; one whose model.json is byte-identical to an idle network's
// (every checkpoint of a run, say) takes that network and writes its own weights into it, so
// networks are built only while more are in use at once than ever before.

import type * as tf from '@tensorflow/tfjs';

interface Entry {
  model: Promise<tf.LayersModel>;
  users: number;
  bytes: number;
  /** Networks of one family have the same layers and weight names: any can take another's weights. */
  family: string;
  /** The model promise has resolved (a pending one is never reused). */
  ready: boolean;
}

/** How a checkpoint's weights go into an idle network of its family instead of a new one. */
export interface Reuse {
  family: string;
  /** Writes the checkpoint's weights into `model` (or throws, and the network is disposed). */
  load: (model: tf.LayersModel) => void | Promise<void>;
}

export class SharedModels {
  /** In least recently used order (a Map keeps insertion order; a use moves its key to the end). */
  private readonly entries = new Map<string, Entry>();
  private built = 0;

  /**
   * @param maxIdle networks kept when no agent uses them.
   * @param maxIdleBytes their weights' bytes at most, together.
   */
  constructor(
    private readonly maxIdle = 8,
    private readonly maxIdleBytes = 64 << 20,
  ) {}

  /**
   * The network of `key`: the one kept for it, else an idle one of `reuse.family` with the key's
   * weights loaded, else one `build` makes. `release` hands it back (once). Callers must not
   * change its weights: other agents play it.
   */
  async acquire(key: string, bytes: number, build: () => Promise<tf.LayersModel>, reuse?: Reuse): Promise<{ model: tf.LayersModel; release: () => void }> {
    let entry = this.entries.get(key);
    if (entry) this.entries.delete(key);
    else entry = (reuse && this.takeIdle(reuse, bytes)) ?? this.track({ model: this.build(build), users: 0, bytes, family: reuse?.family ?? '', ready: false });
    this.entries.set(key, entry);
    entry.users++;
    let model: tf.LayersModel;
    try {
      model = await entry.model;
    } catch (e) {
      // A build or load that failed is forgotten: the next load builds (and checks) again.
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

  /** How many networks this pool has built (not counting reuses). */
  get networksBuilt(): number {
    return this.built;
  }

  /** The least recently used idle, built network of `reuse.family`, taken from its key and loading the new weights. */
  private takeIdle(reuse: Reuse, bytes: number): Entry | undefined {
    for (const [key, spare] of this.entries) {
      if (spare.users !== 0 || !spare.ready || spare.family !== reuse.family) continue;
      this.entries.delete(key);
      const model = spare.model.then(async (network) => {
        try {
          await reuse.load(network);
          return network;
        } catch (e) {
          // Some weights may be written already: the network is nobody's now.
          network.dispose();
          throw e;
        }
      });
      return this.track({ model, users: 0, bytes, family: reuse.family, ready: false });
    }
    return undefined;
  }

  /** A new network from `make`, counted. */
  private build(make: () => Promise<tf.LayersModel>): Promise<tf.LayersModel> {
    this.built++;
    return make();
  }

  /** `entry`, marked ready once its network is. */
  private track(entry: Entry): Entry {
    entry.model.then(
      () => (entry.ready = true),
      () => undefined,
    );
    return entry;
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
