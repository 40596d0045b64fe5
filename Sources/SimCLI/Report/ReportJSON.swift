import Foundation
import Scenarios

/// `sim-cli report --format json`: what the text says, as one object, keys sorted. Like the text,
/// no wall-clock figure: the same records give the same bytes.
struct ReportJSON: Encodable {
  struct Campaign: Encodable {
    var policy: String
    var scenario: String
    var seeds: Seeds
    var failing: Int
    /// Every kind, informational ones included: seeds with one, anomalies in all.
    var kinds: [String: Kind]
    var signatures: [Signature]
    /// Percentiles of the time to converge (nil when no seed has a time).
    var convergedAfter: [String: String]?
    var notConverged: Int
  }

  struct Seeds: Encodable {
    var first: UInt64
    var last: UInt64
    var step: UInt64
    var run: Int
    var missing: UInt64
  }

  struct Kind: Encodable {
    var seeds: Int
    var anomalies: Int
  }

  struct Signature: Encodable {
    var number: Int
    var signature: String
    var kinds: [String]
    var axes: [String]
    var seeds: Int
    var firstSeeds: [UInt64]
    /// The minimal scenario file found, else nil.
    var minimized: String?
    var again: String
  }

  var campaigns: [Campaign]
  /// Records counted once because they repeated a seed.
  var duplicates: Int

  init(campaigns: [ReportCampaign], minimal: [[MinimalScenarioLookup.Found]], duplicates: Int) {
    self.duplicates = duplicates
    self.campaigns = campaigns.enumerated().map { index, c in
      var kinds: [String: Kind] = [:]
      for row in c.kinds { kinds[row.kind.rawValue] = Kind(seeds: row.seeds, anomalies: row.anomalies) }
      let signatures = c.findings.groups.enumerated().map { number, group in
        var path: String?
        if case .file(let found, _, _) = minimal[index][number] { path = found }
        return Signature(
          number: number + 1, signature: group.signature.text, kinds: group.signature.key, axes: group.signature.axes, seeds: group.seeds,
          firstSeeds: c.groupSeeds[number].first, minimized: path, again: c.againCommand(seed: group.firstSeed))
      }
      let coverage = c.coverage
      return Campaign(
        policy: c.key.policy, scenario: c.key.scenario,
        seeds: Seeds(first: coverage.first, last: coverage.last, step: coverage.step, run: coverage.count, missing: coverage.missing),
        failing: c.failing, kinds: kinds, signatures: signatures, convergedAfter: c.findings.convergencePercentiles, notConverged: c.neverQuiet)
    }
  }

  var jsonLine: String {
    let e = JSONEncoder()
    e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: (try? e.encode(self)) ?? Data(), as: UTF8.self)
  }
}
