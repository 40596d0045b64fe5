import Foundation
import Scenarios
import Testing

@testable import SimCLI

/// A slice of the standing attack (`scripts/attack`, 4,000 mutated files and every argument
/// abuse in the nightly run): mutated named scenarios through `check` and `run`, and abused
/// arguments, each in its own process. No signal death, no internal error, no hang.
@Suite struct AttackSliceTests {
  /// A small deterministic generator (xorshift64*), so the slice is the same on every run.
  struct Bits {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
      state ^= state >> 12
      state ^= state << 25
      state ^= state >> 27
      return Int((state &* 0x2545_F491_4F6C_DD1D) % UInt64(bound))
    }
  }

  static func mutants() -> [Data] {
    var bits = Bits(state: 2026)
    var out: [Data] = []
    let corpus = Scenario.builtInNames.compactMap { Scenario.builtInText($0).map { Array($0.utf8) } }
    let junk: [[UInt8]] = [
      [0xFF], [0xC3, 0x28], [0x00], [0x0D], [0x0B], [0x1B, 0x5B, 0x33, 0x31, 0x6D], Array("99999999999999999999".utf8), Array("\"".utf8),
    ]
    for _ in 0..<12 {
      var b = corpus[bits.next(corpus.count)]
      switch bits.next(4) {
      case 0:
        for _ in 0..<4 { b[bits.next(b.count)] = UInt8(bits.next(256)) }
      case 1:
        b.insert(contentsOf: junk[bits.next(junk.count)], at: bits.next(b.count + 1))
      case 2:
        b = Array(b[0..<bits.next(b.count + 1)])
      default:
        b += Array(repeating: UInt8(ascii: "\n"), count: 20_000) + Array("at 1s sync\n".utf8)
      }
      out.append(Data(b))
    }
    return out
  }

  static func acceptable(_ code: Int32) -> Bool { [0, 1, 64, 65, 74].contains(code) }

  @Test func mutatedScenariosNeverCrashCheckOrRun() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("attack-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for (k, data) in Self.mutants().enumerated() {
      let file = dir.appendingPathComponent("m\(k).scenario")
      try data.write(to: file)
      for command in ["check", "run"] {
        let r = try runProcess([command, file.path])
        #expect(Self.acceptable(r.code), "\(command) of mutant \(k) exited \(r.code): \(r.stderr.prefix(300))")
      }
    }
  }

  @Test(arguments: [
    ["fuzz", "--jobs", "abc"], ["fuzz", "--seeds", "5..1"], ["fuzz", "--shard", "3/2"], ["fuzz", "--out", "/dev/full", "--seeds", "1..2"],
    ["fuzz", "--policy", "crdt batch=0"], ["run", "/dev/null"], ["run", "fat-note-lww", "--trace", "/"],
    ["run", "fat-note-lww", "--timeline", "/dev/full"],
    ["check", "/dev/zero"], ["shrink", "fat-note-lww", "--fuzz"], ["compare", "--policies", ",", "--seeds", "1..1"], ["bench", "nope"],
    ["selftest", "--oracles", "--seeds", "2..1"], ["nope"], ["run", "\u{1B}[31m"],
  ])
  func abusedArgumentsNeverCrash(arguments: [String]) throws {
    let r = try runProcess(arguments)
    #expect(Self.acceptable(r.code), "\(arguments) exited \(r.code): \(r.stderr.prefix(300))")
    #expect(!r.stderr.contains("internal error"))
  }
}
