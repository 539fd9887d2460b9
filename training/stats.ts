// Small statistics for evaluations: means with 95% confidence intervals (Student t), and
// Bradley-Terry ratings on the Elo scale.

/** Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom (t975 beyond). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

export interface MeanCi {
  mean: number;
  /** Half-width of the 95% confidence interval (NaN with fewer than two samples). */
  ci95: number;
  n: number;
}

const Z975 = 1.959963984540054;

/**
 * The 97.5% quantile of Student's t with `df` degrees of freedom: the table up to 30, beyond it
 * the Cornish-Fisher expansion in 1/df (Abramowitz & Stegun 26.7.5), within 1e-5 there. (1.96
 * for every df past 30 made intervals up to 4% too narrow.)
 */
export function t975(df: number): number {
  if (df <= T975.length) return T975[df - 1]!;
  const z = Z975;
  const z2 = z * z;
  const g1 = (z * (z2 + 1)) / 4;
  const g2 = (z * ((5 * z2 + 16) * z2 + 3)) / 96;
  const g3 = (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
  const g4 = (z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

/** Mean and 95% CI half-width of independent samples. */
export function meanCi(samples: readonly number[]): MeanCi {
  const n = samples.length;
  if (n === 0) return { mean: NaN, ci95: NaN, n };
  const mean = samples.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, ci95: NaN, n };
  const variance = samples.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  const t = t975(n - 1);
  return { mean, ci95: (t * Math.sqrt(variance)) / Math.sqrt(n), n };
}

/**
 * Bradley-Terry strengths from pairwise wins, fitted by the MM algorithm (Hunter 2004) with
 * half a virtual draw between every pair so that unbeaten players stay finite, reported on the
 * Elo scale: 400 * log10(strength), shifted so the mean rating is 1500. A 100-point gap means
 * the stronger side is expected to win about 64% of pairings.
 * `wins[i][j]` counts the pairings i won against j (ties count half to each).
 */
export function bradleyTerryElo(wins: readonly (readonly number[])[], iterations = 500): number[] {
  const k = wins.length;
  const w = wins.map((row, i) => row.map((v, j) => (i === j ? 0 : v + 0.5)));
  let strength = new Array<number>(k).fill(1);
  for (let it = 0; it < iterations; it++) {
    const next = strength.map((_, i) => {
      let totalWins = 0;
      let denominator = 0;
      for (let j = 0; j < k; j++) {
        if (i === j) continue;
        totalWins += w[i]![j]!;
        denominator += (w[i]![j]! + w[j]![i]!) / (strength[i]! + strength[j]!);
      }
      return denominator > 0 ? totalWins / denominator : strength[i]!;
    });
    const geometric = Math.exp(next.reduce((a, b) => a + Math.log(b), 0) / k);
    strength = next.map((s) => s / geometric);
  }
  const elo = strength.map((s) => 400 * Math.log10(s));
  const shift = 1500 - elo.reduce((a, b) => a + b, 0) / k;
  return elo.map((e) => e + shift);
}
