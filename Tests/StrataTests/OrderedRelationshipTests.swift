import Foundation
import Strata
import Testing

/// Ordered to-many relationships: order kept durably, and cheap inserts in the middle.
@Suite struct OrderedRelationshipTests {
    @Test(arguments: StoreKind.allCases)
    func orderSurvivesSaveReopenAndMoves(_ kind: StoreKind) throws {
        var stack = try TestStack.relationships(kind)
        let context = stack.context()
        let playlist = try #require(try context.make("RelPlaylist", ["name": "Mix"]) as? RelPlaylist)
        let tracks = try (0..<6).map { try #require(try context.make("RelTrack", ["title": "T\($0)"]) as? RelTrack) }
        playlist.tracks = [tracks[3], tracks[1], tracks[5]]
        #expect(tracks[1].playlist === playlist)
        let steps = try playlist.mutableOrderedSetValue(forKey: "tracks")
        try steps.insert(tracks[0], at: 0)
        try steps.insert(tracks[4], at: 2)
        try steps.insert(tracks[2], at: 4)
        #expect(playlist.tracks.map(\.title) == ["T0", "T3", "T4", "T1", "T2", "T5"])
        try context.save()
        stack = try stack.reopened()
        var check = stack.context()
        var reloaded = try #require(check.object(with: playlist.objectID) as? RelPlaylist)
        #expect(reloaded.tracks.map(\.title) == ["T0", "T3", "T4", "T1", "T2", "T5"])

        // Move, remove, and set the to-one of a track: order and membership follow.
        let list = try reloaded.mutableOrderedSetValue(forKey: "tracks")
        try list.move(from: 5, to: 0)
        try list.remove(at: 1)
        let t4 = try list.object(at: 2)
        (t4 as? RelTrack)?.playlist = nil
        #expect(reloaded.tracks.map(\.title) == ["T5", "T3", "T1", "T2"])
        try check.save()
        stack = try stack.reopened()
        check = stack.context()
        reloaded = try #require(check.object(with: playlist.objectID) as? RelPlaylist)
        #expect(reloaded.tracks.map(\.title) == ["T5", "T3", "T1", "T2"])
        #expect(try check.existingObject(with: tracks[0].objectID).value(forKey: "playlist") == nil)
    }

    @Test func insertingInTheMiddleOfTenThousandWritesOnlyTheNewLinks() throws {
        let stack = try TestStack.relationships(.strata)
        let store = try #require(stack.store as? StrataStore)
        let context = stack.context()
        let playlist = try #require(try context.make("RelPlaylist", ["name": "Long"]) as? RelPlaylist)
        let list = try playlist.mutableOrderedSetValue(forKey: "tracks")
        for index in 0..<10_000 {
            let track = RelTrack(entity: stack.entity("RelTrack"), insertInto: context)
            track.title = "T\(index)"
            try list.insert(track)
        }
        try context.save()
        let middle = (0..<3).map { index -> RelTrack in
            let track = RelTrack(entity: stack.entity("RelTrack"), insertInto: context)
            track.title = "new\(index)"
            return track
        }
        let before = store.rowWrites
        try list.insert(middle[0], at: 5_000)
        try list.insert(middle[1], at: 5_000)
        try list.insert(middle[2], at: 9_999)
        try context.save()
        // Three track rows, three links, and the playlist's row (its relationship changed): nothing else.
        #expect(store.rowWrites - before == 7)

        let check = stack.context()
        let titles = try #require(check.object(with: playlist.objectID) as? RelPlaylist).tracks.map(\.title)
        #expect(titles.count == 10_003)
        #expect(titles[4_999] == "T4999")
        #expect(titles[5_000] == "new1")
        #expect(titles[5_001] == "new0")
        #expect(titles[5_002] == "T5000")
        #expect(titles[9_999] == "new2")
        #expect(titles.last == "T9999")
    }
}
