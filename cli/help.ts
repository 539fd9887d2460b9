// Help texts of the verbs whose flags are parsed in cli/main.ts, cli/train.ts, cli/worker.ts and
// cli/exploit.ts. `serve` and `play` keep theirs beside their flag tables (cli/serve.ts, cli/play.ts).

import { MAX_LEARNER_THREADS } from '../training/config.js';
import { DEFAULT_LOCK_SECONDS, MAX_LOCK_SECONDS } from '../training/distributed/worker.js';
import { MAX_RECORD_BYTES } from './read-input.js';

/**
 * Most hands `random` and `demo` play: the session and its record are held in memory, about 9 KB
 * a hand (one limit for both verbs). And a record `random` prints must be one `replay` reads (MAX_RECORD_BYTES): 100,000
 * hands of six-player tavern5 with a five-card exchange printed 268 MB, which replay refused as
 * malformed; 50,000 leave that record at half the limit.
 */
export const MAX_PRINTED_SESSION_HANDS = 50_000;

const SESSION_FLAGS = `  --profile didactic4|tavern5   rule profile (default didactic4; docs/rules.md §3, §4)
  --players N                   3 to 6 (default 4)
  --variant JSON                further rule-set fields, e.g. '{"hands":8}' (docs/rules.md §0)`;

export const VERB_HELP: Record<string, string> = {
  replay: `kratzen replay <record.json|->

Replays a record (docs/rules.md §5) and prints its result JSON (docs/rules.md §6).
Reads standard input when the file is "-"; a record over ${MAX_RECORD_BYTES >> 20} MiB is refused.

Exit codes: 0 ok, 1 the record contains an illegal action or an amount overflow,
2 the record is malformed (the error names the bad field), 3 the output cannot be written
(a full disk; a JSON line on stderr says so).
`,
  random: `kratzen random --seed S [options]

Prints the record (docs/rules.md §5) of one session of uniformly random play.

  --seed S                      required; an integer or any string
  --hands H                     hands in the session (default: one per player; at most ${MAX_PRINTED_SESSION_HANDS})
${SESSION_FLAGS}
`,
  demo: `kratzen demo [--seed S] [options]

Plays one session of uniformly random play and prints a line per hand.

  --seed S                      an integer or any string (default 0)
  --hands H                     hands in the session (default: one per player; at most ${MAX_PRINTED_SESSION_HANDS})
${SESSION_FLAGS}
`,
  train: `kratzen train [options]

Self-play PPO training (README "Training"). Writes runs/<name>/: checkpoints/, metrics.jsonl,
report.html. Ctrl-C saves after the current update; --resume continues from the latest checkpoint.

  --config FILE                 JSON training config (training/config.ts); flags win over it
  --name N                      run name (default train-<date>-<time>)
  --runs-dir DIR                parent folder of the run (default runs)
  --seed S                      seed of the whole run (default 0)
  --updates U                   PPO updates
  --num-envs N                  environments stepped together
  --rollout-steps T             steps per environment per update
  --hidden A,B                  hidden layer sizes
  --lr X                        learning rate
  --eval-every K                evaluate against the baselines every K updates
  --final-eval-deals D          duplicate deals in the final evaluation
  --actors K                    collect rollouts in K worker threads (numEnvs / K envs each),
                                the next one while the learner updates (config overlapRollouts);
                                reproducible for a seed and K (default 0: in this thread)
  --learner-threads K           threads that differentiate each minibatch, a part each (default 2,
                                at most ${MAX_LEARNER_THREADS}); reproducible for a seed and K (config learnerThreads)
  --critic shared|oracle|oracle-head   (default oracle)
                                values for the advantages: the policy's own head, or a critic that
                                also sees the other hands during training (config critic)
  --suit-symmetry on|off|holding   the policy reads the cards with trump relabelled as suit 0, so
                                it learns each trump suit's play once; holding: the plain suits
                                also ordered by its own cards (config suitSymmetry; default
                                holding)
  --initial-policy DIR          start from this checkpoint's policy weights (a store or a run: its
                                latest; fine-tuning; same rules and hidden sizes; no imitation
                                updates unless the config asks)
  --redis URL                   collect the K rollout blocks on kratzen workers through this Redis
                                instead (same metrics as --actors K here; docs/scale-out.md); a URL
                                without a password takes $KRATZEN_REDIS_PASSWORD
  --backend auto|tensorflow|wasm|cpu
                                TF.js backend (auto: tfjs-node when installed, else wasm,
                                else the plain-JS cpu backend)
  --resume                      continue runs/<name>/ from its latest checkpoint
${SESSION_FLAGS}
`,
  eval: `kratzen eval --agents A,B[,...] [options]

Duplicate tournament (README "Evaluation"): every deal is played once per seat rotation, so
each agent holds every hand. Prints chips per hand with a 95% confidence interval and writes
result.json and report.html to --out. Ctrl-C stops after the deals in play and exits 130.

  --agents A,B[,...]            random, heuristic[:caution=C], pimc[:samples=K,timeBudgetMs=T,rollout=heuristic|random],
                                or a checkpoint directory (a checkpoint, a store, or a run: runs/<name>, whose
                                latest checkpoint when the evaluation starts plays every deal); results depend
                                only on the seed, except with timeBudgetMs (a pimc agent that searches for a
                                time finds more on a faster machine, or one less busy)
  --hands N                     hands over all rotations (default 1000)
  --seed S                      seed of the deals (default 0)
  --workers W                   worker threads of a local evaluation (default min(2, cores); not with --redis)
  --out DIR                     report folder (default runs/eval-<time>); an existing one's result.json
                                and report.html are replaced, each whole (never half-written)
  --json                        print the whole result as JSON
  --redis URL                   spread the deals over kratzen workers on this Redis
                                (redis://HOST:PORT[/db]); same result as one machine (docs/scale-out.md);
                                a URL without a password takes $KRATZEN_REDIS_PASSWORD
  --block-deals B               deals per Redis job, with --redis (default 8)
${SESSION_FLAGS}
`,
  worker: `kratzen worker --redis URL [options]

Takes jobs from the BullMQ queues on a Redis server: blocks of deals of the duplicate matches
that \`kratzen eval --redis URL\` splits up, and the rollout blocks of \`kratzen train --redis
URL\`. Start any number, on any machines that reach the Redis server; checkpoints come through
Redis by content hash. Ctrl-C or SIGTERM finishes the running jobs and exits; a worker killed
outright loses nothing: its job is retried elsewhere once its lock expires. See docs/scale-out.md.

  --redis URL                   redis://[user:password@]HOST:PORT[/db], or rediss:// for TLS; a URL
                                without a password takes $KRATZEN_REDIS_PASSWORD (off the command line)
  --concurrency N               jobs of each queue at once, each in its own thread (default:
                                the cores); tournament and rollout jobs together: up to 2N
  --lock-seconds S              job lock without renewal: how soon a dead worker's job is
                                retried, 1 to ${MAX_LOCK_SECONDS} (default ${DEFAULT_LOCK_SECONDS})
`,
  exploit: `kratzen exploit --target <agent> [options]

An exploitability estimate: a policy trains by PPO against the frozen target playing every other
seat (starting as a copy of the target when it is a checkpoint, else as a clone of the
heuristic), then a duplicate match seats it at one seat and the target at the others, every seat
in turn. Reports the exploiter's edge (chips per hand over the target seats' mean) with its 95%
interval: a lower bound on the target's exploitability at this table (approximate best response,
Timbers et al. 2020). A short run gives a loose bound.

  --target A                    random, heuristic, pimc[:...], or a checkpoint directory
  --updates U                   PPO updates against the target (default 100)
  --imitation-updates K         behaviour-cloning updates of the heuristic first
                                (default 40; 0 for a checkpoint target, which is copied instead)
  --hands H                     hands of the duplicate match over all rotations (default 6400)
  --seed S                      seed of training and match (default 0)
  --backend auto|tensorflow|wasm|cpu
  --json                        print {"target", "edge", "ci95", "deals", "updates"}
  --out DIR                     also write the whole result, with the run's settings, to
                                DIR/result.json (replaced whole, never half-written)
${SESSION_FLAGS}
`,
};

/** True when a verb's arguments ask for its help. */
export function wantsHelp(args: readonly string[]): boolean {
  // Past `--` every argument is a positional one, a file named --help included.
  const end = args.indexOf('--');
  const flags = end < 0 ? args : args.slice(0, end);
  return flags.includes('--help') || flags.includes('-h');
}
