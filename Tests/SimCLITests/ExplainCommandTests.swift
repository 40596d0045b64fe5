import Foundation
import Testing

@testable import SimCLI

@Suite struct ExplainCommandTests {
  static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../ScenariosTests/Golden/explain-fat-note-lww.txt").standardized

  @Test func explainPrintsTheCausalChainAndExitsLikeRun() throws {
    let r = runCLI("explain", "fat-note-lww")
    #expect(r.code == .success, "\(r.stderr)")
    #expect(r.stderr.isEmpty)
    // The same text the library renders, recorded by ScenariosTests (RECORD_GOLDEN=1).
    let expected = String(decoding: try Data(contentsOf: Self.golden), as: UTF8.self)
    #expect(r.stdout == expected)
    #expect(runCLI("explain", "fat-note-lww", "--policy", "crdt").code == .failure)
  }

  @Test func explainReportsUsageErrorsLikeRun() {
    let r = runCLI("explain", "fat-note-lw")
    #expect(r.code == .usage)
    #expect(r.stderr.contains("did you mean 'fat-note-lww'?"))
    #expect(runCLI("explain", "fat-note-lww", "--seed", "x").code == .usage)
  }

  @Test func runWritesTheTimelinePicture() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(getpid()).svg").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let r = runCLI("run", "skewed-clock", "--timeline", path)
    #expect(r.code == .success, "\(r.stderr)")
    #expect(r.stdout.hasPrefix("skewed-clock — policy field-lww-clock"))
    let svg = try String(contentsOfFile: path, encoding: .utf8)
    #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(svg.hasSuffix("</svg>\n"))
    let missing = runCLI("run", "skewed-clock", "--timeline", "/nonexistent-folder/t.svg")
    #expect(missing.code == .usage)
    #expect(missing.stderr.contains("cannot write there: the folder '/nonexistent-folder' does not exist"))
    let folder = runCLI("shrink", "fat-note-lww", "--out", FileManager.default.temporaryDirectory.path)
    #expect(folder.code == .usage)
    #expect(folder.stderr.contains("cannot write there: it is a folder"))
  }

  /// Pictures and explanations read dictionaries internally; no order may leak into the bytes.
  @Test func theTimelineAndTheExplanationAreTheSameInSeparateProcesses() throws {
    let folder = FileManager.default.temporaryDirectory
    let a = folder.appendingPathComponent("fanout-a-\(getpid()).svg").path
    let b = folder.appendingPathComponent("fanout-b-\(getpid()).svg").path
    defer { for p in [a, b] { try? FileManager.default.removeItem(atPath: p) } }
    _ = try runProcess(["run", "three-device-fanout", "--seed", "4", "--timeline", a])
    _ = try runProcess(["run", "three-device-fanout", "--seed", "4", "--timeline", b])
    #expect(FileManager.default.contents(atPath: a) == FileManager.default.contents(atPath: b))
    let first = try runProcess(["explain", "three-device-fanout", "--seed", "4"])
    let second = try runProcess(["explain", "three-device-fanout", "--seed", "4"])
    #expect(first.code == 0)
    #expect(first.stdout == second.stdout)
    #expect(first.stdout == runCLI("explain", "three-device-fanout", "--seed", "4").stdout)
  }
}
