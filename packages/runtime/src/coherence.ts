/**
 * Cache coherence as the contracts declare it: every RPC carries a `notify.common.v1.coherence`
 * option naming the change announcements it makes (kind, and where the keys come from) or why
 * it makes none. The owners' announcing wrappers and the gateway's own forgetting are derived
 * from it here, so a write is declared once, next to its RPC.
 */
import { getOption, hasOption, type DescField, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { createContextKey, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { commonV1 } from "@notify/proto";
import { EVERY_KEY, type Announce, type ChangedKeys } from "./changes.js";
import { scopeOf } from "./rpc.js";

export const { ChangeKind } = commonV1;
export type ChangeKind = commonV1.ChangeKind;
/** A kind an announcement can name. */
export type AnnouncedKind = Exclude<ChangeKind, commonV1.ChangeKind.UNSPECIFIED>;

/** The coherence a method declares; undefined when it declares none (the contract test fails for those). */
export function coherenceOf(method: DescMethod): commonV1.Coherence | undefined {
  return hasOption(method, commonV1.coherence) ? getOption(method, commonV1.coherence) : undefined;
}

/** Keys of one announcement, from the request and the keys its handler named. */
export type KeysOf = (request: object, named: ReadonlyMap<AnnouncedKind, readonly string[]>) => ChangedKeys;

export interface DeclaredAnnouncement {
  kind: AnnouncedKind;
  keysOf: KeysOf;
  /** The keys come from the handler, not the request (only the owner knows them). */
  namedByHandler: boolean;
}

/** Reads the strings at a path of proto field names, through repeated message fields. */
function requestFieldKeys(input: DescMessage, path: string, where: string): (request: object) => string[] {
  const steps: DescField[] = [];
  let message: DescMessage | undefined = input;
  for (const name of path.split(".")) {
    const field: DescField | undefined = message?.fields.find((candidate) => candidate.name === name);
    if (!field) throw new Error(`${where}: ${input.typeName} has no field path ${path}`);
    steps.push(field);
    message = field.message;
  }
  const last = steps.at(-1)!;
  if (last.message || last.enum || (last.fieldKind !== "scalar" && last.fieldKind !== "list")) {
    throw new Error(`${where}: ${path} does not end at a string`);
  }
  return (request) => {
    let values: unknown[] = [request];
    for (const step of steps) {
      values = values.flatMap((value) => {
        const next = (value as Record<string, unknown> | undefined)?.[step.localName];
        return Array.isArray(next) ? next : next === undefined ? [] : [next];
      });
    }
    return values.filter((value): value is string => typeof value === "string");
  };
}

/** The announcements `method` declares, with how each finds its keys; throws for a declaration that cannot be followed. */
export function declaredAnnouncements(method: DescMethod): DeclaredAnnouncement[] {
  const where = `${method.parent.typeName}.${method.name}`;
  return (coherenceOf(method)?.announces ?? []).map((announcement) => {
    const { kind, keys } = announcement;
    if (kind === ChangeKind.UNSPECIFIED) throw new Error(`${where}: an announcement names no kind`);
    switch (keys.case) {
      case "requestField": {
        const read = requestFieldKeys(method.input, keys.value, where);
        return { kind, keysOf: (request) => read(request), namedByHandler: false };
      }
      case "everyKey":
        return { kind, keysOf: () => EVERY_KEY, namedByHandler: false };
      case "namedByHandler":
        return { kind, keysOf: (_, named) => named.get(kind) ?? [], namedByHandler: true };
      default:
        throw new Error(`${where}: an announcement says nothing of its keys`);
    }
  });
}

/** The keys the running handler names, per kind; set only for methods that declare keys named by their handler. */
const namedKeys = createContextKey<Map<AnnouncedKind, string[]> | undefined>(undefined);

/**
 * Names keys a running write changed, for a method whose contract says its handler names them
 * (they are announced when it ends, failed or not). Outside the announcing wrapper (a handler
 * tested alone) there is nobody to tell, and the keys are dropped.
 */
export function announceKeys(context: HandlerContext, kind: AnnouncedKind, keys: readonly string[]): void {
  const named = context.values.get(namedKeys);
  if (!named) return;
  named.set(kind, [...(named.get(kind) ?? []), ...keys]);
}

/**
 * `implementation` with every method that declares announcements wrapped: once the method is
 * done, failed or not (a call that failed after its commit changed its keys all the same), each
 * announcement goes out through the announcer of its kind, in the caller's environment and in the
 * order declared, and the answer waits for it, so a client that reads right after a write never
 * meets an old copy.
 * Throws at start for a kind without an announcer.
 */
export function announcingWrites<S extends DescService>(
  service: S,
  implementation: ServiceImpl<S>,
  announcers: Partial<Record<AnnouncedKind, Announce>>,
): ServiceImpl<S> {
  const wrapped: Record<string, unknown> = { ...implementation };
  for (const method of service.methods) {
    const announcements = declaredAnnouncements(method).map((declared) => {
      const announce = announcers[declared.kind];
      if (!announce) throw new Error(`${service.typeName}.${method.name} announces ${ChangeKind[declared.kind]} changes, but no announcer of them was given`);
      return { ...declared, announce };
    });
    if (announcements.length === 0) continue;
    const handler = (implementation as Record<string, (request: object, context: HandlerContext) => unknown>)[method.localName]!;
    const names = announcements.some((announcement) => announcement.namedByHandler);
    wrapped[method.localName] = async (request: object, context: HandlerContext) => {
      const { environmentId } = scopeOf(context);
      const named = new Map<AnnouncedKind, string[]>();
      if (names) context.values.set(namedKeys, named);
      try {
        return await handler(request, context);
      } finally {
        await Promise.all(announcements.map(({ announce, keysOf }) => announce(environmentId, keysOf(request, named))));
      }
    };
  }
  return wrapped as ServiceImpl<S>;
}
