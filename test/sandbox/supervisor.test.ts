import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  execLine,
  killLine,
  parseMessage,
  supervisorArgv,
  supervisorScript,
} from "../../src/sandbox/supervisor.js";

describe("the live sandbox's supervisor protocol", () => {
  it("hex-encodes every string of a request, so the supervisor's fixed patterns cannot be fooled", () => {
    const line = execLine(7, {
      argv: ["bash", "-c", 'echo "]}"; printf \'"op":"kill"\'', "é\n"],
      stdin: '{"op":"exec"}\n',
      timeoutMs: 1_000.4,
      maxOutputBytes: 30_000,
    });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toContain("\n");
    const parsed = JSON.parse(line) as { argv: string[]; stdin: string; timeoutMs: number; op: string };
    expect(parsed.op).toBe("exec");
    expect(parsed.timeoutMs).toBe(1_001);
    expect(parsed.argv.map((hex) => Buffer.from(hex, "hex").toString("utf8"))).toEqual([
      "bash",
      "-c",
      'echo "]}"; printf \'"op":"kill"\'',
      "é\n",
    ]);
    expect(Buffer.from(parsed.stdin, "hex").toString("utf8")).toBe('{"op":"exec"}\n');
    expect(line.match(/"op":/g)).toHaveLength(1);
    expect(killLine(7)).toBe('{"op":"kill","id":7}\n');
  });

  it("refuses an argv entry with a NUL byte, as spawn does", () => {
    expect(() => execLine(1, { argv: ["echo", "a\0b"], timeoutMs: 1, maxOutputBytes: 1 })).toThrow(/NUL/);
  });

  it("accepts only the protocol's messages", () => {
    expect(parseMessage('{"op":"ready","pid":2}')).toEqual({ op: "ready", pid: 2 });
    expect(parseMessage('{"op":"data","id":1,"fd":2,"hex":"6869"}')).toMatchObject({ fd: 2 });
    expect(parseMessage('{"op":"exit","id":1,"code":null,"signal":9,"timedOut":1}')).toMatchObject({
      op: "exit",
    });
    for (const line of [
      "",
      "hello",
      "[]",
      "null",
      '{"op":"data","id":1,"fd":3,"hex":""}',
      '{"op":"other"}',
    ]) {
      expect(parseMessage(line), line).toBeNull();
    }
  });

  it("is a Perl program the host's perl compiles, built for this architecture", () => {
    const argv = supervisorArgv("/usr/bin/perl");
    expect(argv.slice(0, 3)).toEqual(["/usr/bin/perl", "-e", supervisorScript()]);
    expect(() => supervisorArgv("/usr/bin/perl", "s390x")).toThrow(/x86_64 and aarch64/);
    expect(argv).toHaveLength(5);
    expect(supervisorArgv("/usr/bin/perl", process.arch, "/run/awaken-egress/proxy.sock").slice(5)).toEqual([
      "/run/awaken-egress/proxy.sock",
    ]);
    const checked = spawnSync("perl", ["-c", "-e", supervisorScript()], { encoding: "utf8" });
    expect(checked.status, checked.stderr).toBe(0);
    expect(checked.stderr).toMatch(/syntax OK/);
  });

  it("is found by the built server too (dist/ carries only JavaScript; the program is read from src/)", () => {
    const built = new URL("../../dist/sandbox/supervisor.js", import.meta.url);
    const probe = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(built.href)}); process.stdout.write(m.supervisorScript());`,
      ],
      { encoding: "utf8" },
    );
    expect(probe.status, probe.stderr).toBe(0);
    expect(probe.stdout).toBe(supervisorScript());
    expect(probe.stdout).toMatch(/"op":"ready"/);
  });
});
