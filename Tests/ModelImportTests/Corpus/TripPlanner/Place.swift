// swift-format-ignore-file
import Foundation
import SwiftData

struct SeatInfo: Codable, Hashable {
  var row: Int
  var letter: String
}

@Model
public final class Place {
  public var name: String = ""
  public var latitude: Double = 0
  public var longitude: Double = 0
  @Attribute(.externalStorage) public var photo: Data?
  @Relationship(deleteRule: .nullify, inverse: \Leg.arrival)
  public var arrivals: [Leg]? = []

  public init(name: String) {
    self.name = name
  }
}

extension Place {
  var label: String { "📍 \(name)" }
}
