import { commandOf } from './command-parser';
import type { JsonObject } from './json-read';
import {
  actorIdOf,
  callbackDataOf,
  chatIdOf,
  payloadOf,
  specOf,
  updateType,
  type UpdateTypeSpec,
} from './update-extractors';
import type { Update } from './update.types';

/**
 * What rules ask of one update, each worked out at most once and only when a rule asks,
 * so matching it against many routes costs one pass over the update.
 */
export class UpdateFacts {
  readonly type: string | undefined;
  private readonly spec: UpdateTypeSpec | undefined;
  private readonly payload: JsonObject | undefined;
  private actorDone = false;
  private actorValue: number | undefined;
  private chatDone = false;
  private chatValue: number | undefined;
  private commandDone = false;
  private commandValue: string | undefined;

  constructor(
    update: Update,
    private readonly botUsername: string | undefined,
  ) {
    this.type = updateType(update);
    this.payload = this.type === undefined ? undefined : payloadOf(update, this.type);
    this.spec = specOf(this.type);
  }

  get actorId(): number | undefined {
    if (!this.actorDone) {
      this.actorDone = true;
      if (this.spec !== undefined && this.payload !== undefined) {
        this.actorValue = actorIdOf(this.spec, this.payload);
      }
    }
    return this.actorValue;
  }

  get chatId(): number | undefined {
    if (!this.chatDone) {
      this.chatDone = true;
      if (this.spec !== undefined && this.payload !== undefined) {
        this.chatValue = chatIdOf(this.spec, this.payload);
      }
    }
    return this.chatValue;
  }

  get command(): string | undefined {
    if (!this.commandDone) {
      this.commandDone = true;
      if (this.spec !== undefined && this.payload !== undefined) {
        this.commandValue = commandOf(this.spec, this.payload, this.botUsername);
      }
    }
    return this.commandValue;
  }

  /** Read once per rule that asks; a lookup, not worth caching. */
  get callbackData(): string | undefined {
    return this.type === undefined || this.payload === undefined
      ? undefined
      : callbackDataOf(this.type, this.payload);
  }
}
