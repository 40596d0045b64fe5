import Foundation

/// The names of the scenarios a test can run by name, sorted: every `NAME.scenario` in the
/// `scenarios/` folders the helpers search (next to the calling test file and above it, up to
/// the package's root) and,
/// with `includingBuiltIn`, the built-in scenarios too. For a parameterized test:
///
///     @Test(arguments: scenarioNames())
///     func everyScenarioHolds(_ name: String) {
///       expectScenarioHolds(scenario: name)
///     }
///
/// An empty list gives a test with no cases, which passes without running anything: check
/// `!scenarioNames().isEmpty` in a test of its own if the folder might be missing.
public func scenarioNames(includingBuiltIn: Bool = false, filePath: String = #filePath) -> [String] {
  var names: [String] = []
  for folder in ScenarioLookup.folders(near: filePath) {
    let items = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    names += items.filter { $0.hasSuffix(".scenario") && !$0.hasPrefix(".") }.map { String($0.dropLast(".scenario".count)) }
  }
  if includingBuiltIn { names += Scenario.builtInNames }
  return Array(Set(names)).sorted()
}
