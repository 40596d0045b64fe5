import Foundation
import Scenarios

/// Where a signature's minimal scenario is, when `fuzz --minimize-to DIR` saved one: the path a
/// record names (as written, then under each input's folder, so a campaign's folder can move),
/// else the name `fuzz` gives it (`WORKLOAD-KINDS-seed-N.scenario`) in an input's folder or in a
/// folder where the campaign saved other ones. Only a regular `.scenario` file that parses
/// counts: a record cannot make the report show an arbitrary file.
struct MinimalScenarioLookup {
  /// What was found for one signature.
  enum Found: Sendable {
    /// A scenario file that parses, and the seed whose record named it (nil: found by its name).
    case file(path: String, scenario: ScenarioFile, namedBy: UInt64?)
    /// A record names a path, but there is no scenario there.
    case missing(path: String, namedBy: UInt64)
    /// No record names one, and none was found.
    case none
  }

  /// The folders of the inputs, sorted and distinct (the order of the files changes nothing).
  let folders: [String]

  init(inputs: [String]) {
    var folders = Set<String>()
    for input in inputs { folders.insert(input == "-" ? "." : (input as NSString).deletingLastPathComponent.nonEmpty ?? ".") }
    self.folders = folders.sorted()
  }

  /// The candidates for a path a record names.
  func candidates(for path: String) -> [String] {
    var out = [path]
    let parts = path.split(separator: "/").map(String.init)
    for folder in folders {
      for start in parts.indices {
        out.append(([folder] + parts[start...]).joined(separator: "/"))
      }
    }
    var seen = Set<String>()
    return out.filter { seen.insert($0).inserted }
  }

  /// The minimal scenario of `campaign`'s signature `index`.
  func find(_ campaign: ReportCampaign, signature index: Int) -> Found {
    let seeds = campaign.groupSeeds[index]
    let group = campaign.findings.groups[index]
    if let path = seeds.minimized, let seed = seeds.minimizedSeed {
      for candidate in candidates(for: path) {
        if let scenario = Self.load(candidate) { return .file(path: candidate, scenario: scenario, namedBy: seed) }
      }
      return .missing(path: path, namedBy: seed)
    }
    let name = "\(campaign.key.scenario)-\(group.signature.slug)-seed-\(group.firstSeed).scenario"
    var places = folders
    for other in campaign.groupSeeds.compactMap(\.minimized) {
      let folder = (other as NSString).deletingLastPathComponent
      if !folder.isEmpty, !places.contains(folder) { places.append(folder) }
    }
    for folder in places {
      let candidate = folder == "." ? name : folder + "/" + name
      if let scenario = Self.load(candidate) { return .file(path: candidate, scenario: scenario, namedBy: nil) }
    }
    return .none
  }

  /// The scenario at `path`, when it is a regular `.scenario` file that parses.
  static func load(_ path: String) -> ScenarioFile? {
    guard path.hasSuffix(".scenario"), ScenarioLocator.isRegularFile(path) else { return nil }
    return try? Scenario.load(path)
  }
}

extension String {
  /// The string, or nil when it is empty.
  var nonEmpty: String? { isEmpty ? nil : self }
}
