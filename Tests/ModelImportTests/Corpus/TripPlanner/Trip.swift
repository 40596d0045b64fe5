// swift-format-ignore-file
import Foundation
import SwiftData

/// A trip: where to, when, and its legs.
@Model
final class Trip {
  @Attribute(.unique) var name: String
  var startDate: Date = Date.now
  var endDate: Date?
  var budget: Decimal = 0
  var status: TripStatus = .planning
  var notes: String? = nil
  var travellerCount: Int = 1
  var isFavourite = false
  @Relationship(deleteRule: .cascade, inverse: \Leg.trip) var legs: [Leg] = []
  @Transient var isExpanded = false

  /// Not stored: computed from the legs.
  var legCount: Int { legs.count }

  var title: String {
    get { name.isEmpty ? "Untitled {trip}" : name }
  }

  static var sample: Trip { Trip(name: "Lisbon", startDate: .now) }

  init(name: String, startDate: Date) {
    self.name = name
    self.startDate = startDate
  }

  /* A block comment with a stray brace { and a /* nested */ comment. */
  func rename(to newName: String) {
    name = newName  // "}" in a comment
  }
}

enum TripStatus: String, Codable {
  case planning, booked, done
}

@Model final class Leg {
  var trip: Trip?
  var departure: Date = .now
  var arrival: Place?
  var seat: SeatInfo? = nil
  var legID: UUID = UUID()

  init(trip: Trip? = nil) {
    self.trip = trip
  }
}
