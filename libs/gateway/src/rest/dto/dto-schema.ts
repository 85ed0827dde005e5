import { getMetadataStorage } from 'class-validator';
import type { JsonSchema } from '@relaygram/openapi';
import type { FieldSchema } from './field.decorators';

/**
 * A DTO's JSON Schema, read from the class-validator metadata its field decorators
 * registered: the same metadata validation runs on. Built once, when a document is made.
 */
export function dtoSchema(dto: new () => object): JsonSchema {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const entry of metadata) {
    const documented = entry.constraints?.[0] as FieldSchema | undefined;
    if (!documented?.schema) {
      throw new Error(`${dto.name}.${entry.propertyName}: its decorator gives no schema`);
    }
    properties[entry.propertyName] = documented.schema;
    if (documented.required) required.push(entry.propertyName);
  }
  return { type: 'object', required, properties, additionalProperties: false };
}
