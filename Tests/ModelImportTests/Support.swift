import Foundation
import ModelImport
import XCTest

/// The corpus folder, next to this file.
let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

/// The corpus files under `folder`, named relative to the corpus (`TripPlanner/Trip.swift`).
func corpusSources(_ names: String...) throws -> [(file: String, text: String)] {
  try names.map { name in (name, try String(contentsOf: corpus.appendingPathComponent(name), encoding: .utf8)) }
}

/// The two Core Data versions of the Inventory model, oldest first, named relative to the corpus.
func inventoryVersions() throws -> [(name: String, file: String, text: String)] {
  try ["Inventory", "Inventory 2"].map { name in
    let file = "Inventory.xcdatamodeld/\(name).xcdatamodel/contents"
    return (name, file, try String(contentsOf: corpus.appendingPathComponent(file), encoding: .utf8))
  }
}

/// `RULE FILE:LINE:COLUMN` of each finding of `severity` (all when nil), in order.
func findingKeys(_ model: ImportedModel, _ severity: ImportFinding.Severity? = nil) -> [String] {
  model.findings.filter { severity == nil || $0.severity == severity }.map { "\($0.rule) \($0.location)" }
}
