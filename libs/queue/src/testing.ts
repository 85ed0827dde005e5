/**
 * Test doubles of the queue lib, for tests only (`@relaygram/queue/testing`): a store
 * under a key prefix of its own, and a driver that runs drain jobs by hand.
 */
export { createQueueFixture, type QueueFixture } from './testing/queue-fixture';
export { DrainJobDriver, type TakenDrainJob } from './testing/drain-job-driver';
export { HandOffListener } from './testing/hand-off-listener';
