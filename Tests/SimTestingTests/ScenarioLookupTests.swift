import Foundation
import SimTesting
import Testing

/// Scenario names are looked up from the calling test file up to its package's root, and no
/// further: a package nested in another repository does not pick up that repository's scenarios.
@Suite struct ScenarioLookupTests {
  /// `outer/scenarios/outer.scenario`, `outer/app/Package.swift`, `outer/app/scenarios/mine.scenario`
  /// and a test file at `outer/app/Tests/AppTests/T.swift`; returns the test file's path.
  static func nestedPackage() throws -> (root: URL, testFile: String) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lookup-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
    let text = "scenario x\ndevices phone\npolicy append-only\ntype Note\n  title: string = \"\" mutable\nat 0s phone create Note n1\n"
    let fm = FileManager.default
    try fm.createDirectory(at: root.appendingPathComponent("scenarios"), withIntermediateDirectories: true)
    try fm.createDirectory(at: root.appendingPathComponent("app/scenarios"), withIntermediateDirectories: true)
    try fm.createDirectory(at: root.appendingPathComponent("app/Tests/AppTests"), withIntermediateDirectories: true)
    try text.write(to: root.appendingPathComponent("scenarios/outer.scenario"), atomically: true, encoding: .utf8)
    try text.write(to: root.appendingPathComponent("app/scenarios/mine.scenario"), atomically: true, encoding: .utf8)
    try "// swift-tools-version: 6.0\n".write(to: root.appendingPathComponent("app/Package.swift"), atomically: true, encoding: .utf8)
    return (root, root.appendingPathComponent("app/Tests/AppTests/T.swift").path)
  }

  @Test func namesStopAtThePackageRoot() throws {
    let (root, testFile) = try Self.nestedPackage()
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(scenarioNames(filePath: testFile) == ["mine"])
    #expect(expectScenarioHolds(scenario: "mine", filePath: testFile) != nil)
    withKnownIssue("the outer repository's scenario is past the package root") {
      #expect(expectScenarioHolds(scenario: "outer", filePath: testFile) == nil)
    }
  }

  @Test func withoutAPackageSwiftTheSearchGoesUp() throws {
    let (root, testFile) = try Self.nestedPackage()
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.removeItem(at: root.appendingPathComponent("app/Package.swift"))
    #expect(scenarioNames(filePath: testFile) == ["mine", "outer"])
  }
}
