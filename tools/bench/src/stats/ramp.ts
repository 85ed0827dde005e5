/** Queue depth (deliveries waiting in Redis) at a moment of a ramp step. */
export interface DepthSample {
  /** ms since the step started. */
  t: number;
  depth: number;
}

export interface RampStep {
  /** Offered rate, updates per second. */
  rate: number;
  durationMs: number;
  /** Webhook POSTs answered 2xx. */
  accepted: number;
  /** Webhook POSTs answered otherwise, failed, or never sent because the generator fell behind. */
  failed: number;
  depth: readonly DepthSample[];
}

export interface StepCriteria {
  /** Share of the offered rate ingress must accept. */
  minAcceptedShare: number;
  /** Backlog growth allowed, as a share of the offered rate per second. */
  maxGrowthShare: number;
  /** Backlog allowed at the end of the step, in seconds of offered traffic. */
  maxBacklogSeconds: number;
}

export const DEFAULT_STEP_CRITERIA: StepCriteria = Object.freeze({
  minAcceptedShare: 0.98,
  maxGrowthShare: 0.02,
  maxBacklogSeconds: 0.5,
});

export interface StepJudgement {
  sustainable: boolean;
  acceptedRate: number;
  /** Least-squares slope of the depth over the second half of the step, per second. */
  growthPerSecond: number;
  finalDepth: number;
  reasons: string[];
}

/** Least-squares slope of y over t, in y per second (t in ms); 0 with fewer than 2 points. */
export function slopePerSecond(points: readonly DepthSample[]): number {
  const n = points.length;
  if (n < 2) return 0;
  let st = 0;
  let sy = 0;
  for (const p of points) {
    st += p.t;
    sy += p.depth;
  }
  const mt = st / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.depth - my);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 1000;
}

/**
 * A rate drains "without the queue growing" when ingress accepted (almost) all of it,
 * the backlog's trend over the second half of the step (the first half fills the
 * pipeline) stays under a small share of the rate, and what is left queued at the end
 * is under half a second of traffic: a backlog that is flat but large would still show
 * up as latency.
 */
export function judgeStep(
  step: RampStep,
  criteria: StepCriteria = DEFAULT_STEP_CRITERIA,
): StepJudgement {
  const seconds = step.durationMs / 1000;
  const acceptedRate = seconds > 0 ? step.accepted / seconds : 0;
  const secondHalf = step.depth.filter((p) => p.t >= step.durationMs / 2);
  const growthPerSecond = slopePerSecond(secondHalf);
  const finalDepth = step.depth.length ? step.depth[step.depth.length - 1].depth : 0;
  const reasons: string[] = [];
  if (acceptedRate < step.rate * criteria.minAcceptedShare) {
    reasons.push(`ingress accepted ${Math.round(acceptedRate)}/s of ${step.rate}/s`);
  }
  if (step.failed > 0) reasons.push(`${step.failed} webhook POSTs failed or not sent`);
  if (growthPerSecond > step.rate * criteria.maxGrowthShare) {
    reasons.push(`queue grew ${Math.round(growthPerSecond)}/s`);
  }
  if (finalDepth > step.rate * criteria.maxBacklogSeconds) {
    reasons.push(`${finalDepth} deliveries still queued at the end`);
  }
  return { sustainable: reasons.length === 0, acceptedRate, growthPerSecond, finalDepth, reasons };
}

/** The highest rate of the leading run of sustainable steps (steps in ascending rate). */
export function sustainableRate(judged: readonly { rate: number; sustainable: boolean }[]): number {
  let best = 0;
  for (const step of judged) {
    if (!step.sustainable) break;
    best = Math.max(best, step.rate);
  }
  return best;
}
