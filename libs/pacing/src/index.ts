export { PacingModule } from './pacing.module';
export { countPace, reportTelegram429 } from './pace-metrics';
export {
  OutboundPacer,
  type BotPauses,
  type OutboundPacerOptions,
  type PaceResult,
  type PacerLogger,
  type PacingMode,
  type PauseReport,
} from './outbound-pacer';
export {
  planCall,
  isPacedMethod,
  chatTarget,
  type CallPlan,
  type ChatTarget,
} from './budget/call-plan';
export type { BudgetKind } from './budget/budget-math';
export { broadcastParams, budgetParams, type BudgetParams } from './budget/budget-params';
export type { PauseScope } from './budget/pause-scope';
