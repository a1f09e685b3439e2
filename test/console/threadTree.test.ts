import { describe, expect, it } from "vitest";
import { flattenTree, threadTree } from "../../src/console/projection/threadTree.js";
import { ev } from "./events.js";
import { th } from "./multiagentEvents.js";

describe("the thread tree projection", () => {
  it("a session of one thread is one root", () => {
    const tree = threadTree([th.listed("sthr_p", "lead", null, "idle")], [ev.user("hi")]);
    expect(tree).toEqual([
      {
        id: "sthr_p",
        primary: true,
        agentName: "lead",
        status: "idle",
        workflowRunId: null,
        archived: false,
        children: [],
      },
    ]);
  });

  it("children hang under their parent with their agent, status and workflow run; the primary comes first", () => {
    const threads = [
      th.listed("sthr_c1", "researcher", "sthr_p", "running", "wfr_1"),
      th.listed("sthr_p", "lead", null, "running"),
      th.listed("sthr_c2", "writer", "sthr_p", "idle"),
    ];
    const tree = threadTree(threads, []);
    expect(tree.map((n) => n.id)).toEqual(["sthr_p"]);
    expect(
      flattenTree(tree).map(({ node, depth }) => [
        node.id,
        node.agentName,
        node.status,
        node.workflowRunId,
        depth,
      ]),
    ).toEqual([
      ["sthr_p", "lead", "running", null, 0],
      ["sthr_c1", "researcher", "running", "wfr_1", 1],
      ["sthr_c2", "writer", "idle", null, 1],
    ]);
  });

  it("a child announced by the primary's history but not listed yet shows with its latest status", () => {
    const tree = threadTree(
      [th.listed("sthr_p", "lead", null, "running")],
      [th.created("sthr_new", "researcher", "wfr_7"), th.running("sthr_new", "researcher")],
    );
    expect(tree[0]!.children).toEqual([
      {
        id: "sthr_new",
        primary: false,
        agentName: "researcher",
        status: "running",
        workflowRunId: "wfr_7",
        archived: false,
        children: [],
      },
    ]);
  });

  it("once listed, the list's status wins; the event's workflow run fills in one the list lacks", () => {
    const tree = threadTree(
      [th.listed("sthr_p", "lead", null, "idle"), th.listed("sthr_c", "researcher", "sthr_p", "idle")],
      [th.created("sthr_c", "researcher", "wfr_2"), th.running("sthr_c", "researcher")],
    );
    expect(tree[0]!.children).toMatchObject([{ id: "sthr_c", status: "idle", workflowRunId: "wfr_2" }]);
  });

  it("the status events follow a not-yet-listed child to idle", () => {
    const tree = threadTree(
      [th.listed("sthr_p", "lead", null, "running")],
      [
        th.created("sthr_c", "researcher"),
        th.running("sthr_c", "researcher"),
        th.idle("sthr_c", "researcher"),
      ],
    );
    expect(tree[0]!.children[0]!.status).toBe("idle");
  });

  it("before the list is read, announced children stand as roots of their own", () => {
    const tree = threadTree([], [th.created("sthr_c", "researcher")]);
    expect(tree.map((n) => [n.id, n.primary])).toEqual([["sthr_c", false]]);
  });
});
