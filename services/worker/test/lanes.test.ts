import { describe, expect, it } from "vitest";
import { createLanes, createRoom, type LaneTicket } from "../src/lanes.js";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Admits a job that must get its place at once. */
function admitted(lanes: ReturnType<typeof createLanes>, integrationId = "a"): LaneTicket {
  const ticket = lanes.enter(integrationId);
  if (!ticket || ticket instanceof Promise) throw new Error("expected a place at once");
  return ticket;
}

/** Runs a job's turns up to its call: claim turn, claim, slot; answers when it calls. */
async function toCall(ticket: LaneTicket): Promise<void> {
  await ticket.claimTurn();
  await ticket.slot();
}

/** Teaches a lane how long its calls take: one job called for `ms`. */
async function oneCall(lanes: ReturnType<typeof createLanes>, ms: number, integrationId = "a"): Promise<void> {
  const ticket = admitted(lanes, integrationId);
  await toCall(ticket);
  await pause(ms);
  ticket.done();
}

describe("delivery lanes", () => {
  it("lets at most `slots` calls run at once; the next job calls when one ends", async () => {
    const lanes = createLanes({ slots: 2, places: 100, admissionWaitMs: 1_000 });
    const tickets = [admitted(lanes), admitted(lanes), admitted(lanes)];
    const calling: number[] = [];
    const runs = tickets.map((ticket, index) => toCall(ticket).then(() => calling.push(index)));
    await pause(10);
    expect(calling).toEqual([0, 1]);
    tickets[0]!.done();
    await runs[2];
    expect(calling).toEqual([0, 1, 2]);
    tickets[1]!.done();
    tickets[2]!.done();
  });

  it("keeps as many leases claimed ahead as the calls use up during one claim", async () => {
    // Calls far quicker than a claim: a slot's worth of jobs claims ahead of the busy slots.
    const fast = createLanes({ slots: 4, places: 100, admissionWaitMs: 1_000 });
    await oneCall(fast, 1);
    fast.claimTook(200);
    const calls = [admitted(fast), admitted(fast), admitted(fast), admitted(fast)];
    for (const ticket of calls) await toCall(ticket);
    const waiting = [admitted(fast), admitted(fast), admitted(fast), admitted(fast)];
    const turns = waiting.map((ticket) => ticket.claimTurn());
    expect(turns.every((turn) => turn === undefined)).toBe(true);

    // Calls far slower than a claim: one job at a time claims ahead.
    const slow = createLanes({ slots: 4, places: 100, admissionWaitMs: 1_000 });
    await oneCall(slow, 50);
    slow.claimTook(1);
    const busy = [admitted(slow), admitted(slow), admitted(slow), admitted(slow)];
    for (const ticket of busy) await toCall(ticket);
    const next = [admitted(slow), admitted(slow)];
    expect(next[0]!.claimTurn()).toBeUndefined();
    let secondClaims = false;
    const second = next[1]!.claimTurn()!.then(() => {
      secondClaims = true;
    });
    await pause(10);
    expect(secondClaims).toBe(false);
    // The first claimed job gets a slot: the turn to claim passes on.
    const firstCalls = next[0]!.slot();
    busy[0]!.done();
    await firstCalls;
    await second;
    expect(secondClaims).toBe(true);
    for (const ticket of [...calls, ...waiting, ...busy, ...next]) ticket.done();
  });

  it("gives a job over twice the slots a place when one frees, while the lane moves", async () => {
    const lanes = createLanes({ slots: 1, places: 100, admissionWaitMs: 200 });
    await oneCall(lanes, 1);
    const inside = [admitted(lanes), admitted(lanes)];
    const over = lanes.enter("a");
    expect(over).toBeInstanceOf(Promise);
    inside[0]!.done();
    const ticket = await over;
    expect(ticket).toBeDefined();
    ticket!.done();
    inside[1]!.done();
  });

  it("sends jobs over the bound back when the lane is slow, or when it stalls", async () => {
    // Calls slower than the admission wait: no job beyond those calling waits inside for a slot.
    const slow = createLanes({ slots: 1, places: 100, admissionWaitMs: 20 });
    await oneCall(slow, 30);
    const slowInside = [admitted(slow)];
    expect(slow.enter("a")).toBeUndefined();
    // Another integration is not held back by it.
    expect(slow.enter("b")).toBeDefined();

    const stalled = createLanes({ slots: 1, places: 100, admissionWaitMs: 30 });
    await oneCall(stalled, 1);
    const stalledInside = [admitted(stalled), admitted(stalled)];
    const started = performance.now();
    expect(await stalled.enter("a")).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    for (const ticket of [...slowInside, ...stalledInside]) ticket.done();
  });

  it("keeps slow lanes from filling the process's places: each holds a share, together three quarters", async () => {
    // Four integrations whose calls take longer than the admission wait, each with slots for a
    // quarter of the places: without shares their calls alone would hold every place.
    const lanes = createLanes({ slots: 4, places: 16, admissionWaitMs: 20 });
    const slowIds = ["s1", "s2", "s3", "s4"];
    await Promise.all(slowIds.map((id) => oneCall(lanes, 30, id)));
    const held = new Map<string, LaneTicket[]>(slowIds.map((id) => [id, []]));
    for (const id of slowIds) {
      for (;;) {
        const ticket = lanes.enter(id);
        if (ticket === undefined) break;
        if (ticket instanceof Promise) throw new Error("a slow lane queued a job");
        held.get(id)!.push(ticket);
      }
    }
    expect([...held.values()].flat().length).toBe(12);
    // A fifth integration gets one place to learn its pace, and once it is known to be quick, the last quarter.
    const probe = admitted(lanes, "q");
    expect(lanes.enter("q")).toBeUndefined();
    await toCall(probe);
    probe.done();
    const fresh = [admitted(lanes, "q"), admitted(lanes, "q"), admitted(lanes, "q"), admitted(lanes, "q")];
    // When a call of a lane over its share ends, the lane that had none takes the place.
    held.get("s1")!.pop()!.done();
    expect(lanes.enter("s1")).toBeUndefined();
    held.get("s4")!.push(admitted(lanes, "s4"));
    expect(lanes.enter("s4")).toBeUndefined();
    // Alone, a lane is bound by its slots only: the places are all its own once the others end.
    for (const ticket of [...[...held.values()].flat(), ...fresh]) ticket.done();
    const alone = Array.from({ length: 4 }, () => admitted(lanes, "s1"));
    for (const ticket of alone) ticket.done();
  });

  it("knows no backlog until one of its calls has finished, then what its jobs hold at that pace", async () => {
    const lanes = createLanes({ slots: 2, places: 100, admissionWaitMs: 1_000 });
    const first = admitted(lanes);
    await toCall(first);
    // Its first call is under way: how long the lane needs is not known yet.
    expect(lanes.backlogMs("a")).toBeUndefined();
    await pause(20);
    first.done();
    const held = [admitted(lanes), admitted(lanes), admitted(lanes), admitted(lanes)];
    // Four jobs at two calls at once, each call about as long as the first.
    expect(lanes.backlogMs("a")).toBeGreaterThanOrEqual(35);
    expect(lanes.backlogMs("a")).toBeLessThan(200);
    for (const ticket of held) ticket.done();
  });
});

describe("the room of the sends a process holds", () => {
  it("gives places in the order they were asked for, and is ready for more work only when a place is free that nobody waits for", async () => {
    const room = createRoom(2);
    expect(room.take()).toBeUndefined();
    expect(room.ready()).toBeUndefined();
    expect(room.take()).toBeUndefined();
    const order: string[] = [];
    const first = room.take()!.then(() => order.push("first"));
    const second = room.take()!.then(() => order.push("second"));
    let ready = false;
    const readyNow = room.ready()!.then(() => {
      ready = true;
    });
    room.give();
    await first;
    expect(order).toEqual(["first"]);
    room.give();
    await second;
    expect(order).toEqual(["first", "second"]);
    await pause(0);
    expect(ready).toBe(false);
    room.give();
    await readyNow;
    expect(ready).toBe(true);
    expect(room.take()).toBeUndefined();
    expect(room.take()).toBeInstanceOf(Promise);
  });
});
