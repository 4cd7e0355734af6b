/// Opus in CMAF fragmented MP4, as HLS carries it: the ISO BMFF Opus mapping ("Encapsulation of Opus in ISO Base
/// Media File Format": an `Opus` sample entry with its `dOps` box, 48 kHz timescale) in an init segment, and media
/// segments of one `moof` + `mdat` each (`tfdt` for the decode time, `trun` with each packet's duration and size).
/// Pure functions: the packets are the station's own (its encoder's, or the ones an edge relays), never decoded.
package enum CMAFOpus {
    /// Samples per second on the track's timeline: Opus always decodes at 48 kHz.
    package static let timescale: UInt32 = 48_000
    package static let trackID: UInt32 = 1

    /// The `dOps` box body (big-endian, unlike OpusHead): version 0, channels, pre-skip, input rate, gain, mapping.
    package static func opusSpecific(_ head: OpusPacketInfo.Head, into writer: inout MP4Writer) {
        writer.box("dOps") { box in
            box.u8(0)
            box.u8(UInt8(clamping: head.channels))
            box.u16(UInt16(clamping: head.preSkip))
            box.u32(UInt32(clamping: head.inputRate))
            box.u16(UInt16(bitPattern: Int16(clamping: head.gain)))
            box.u8(UInt8(clamping: head.mappingFamily))
            // Families other than 0: stream count, coupled count and the mapping, as OpusHead has them.
            if head.mappingFamily != 0 { box.append(head.mapping) }
        }
    }

    /// The init segment (`ftyp` + `moov`) of a track with `head`'s channels and pre-skip.
    package static func initSegment(_ head: OpusPacketInfo.Head) -> [UInt8] {
        var writer = MP4Writer(capacity: 640)
        writer.box("ftyp") { box in
            box.fourCC("iso6")
            box.u32(0)
            for brand: StaticString in ["iso6", "cmfc", "mp41"] { box.fourCC(brand) }
        }
        writer.box("moov") { moov in
            moov.fullBox("mvhd") { box in
                box.u32(0)  // creation and modification times: unknown
                box.u32(0)
                box.u32(1000)  // timescale
                box.u32(0)  // duration: a live, fragmented track
                box.u32(0x0001_0000)  // rate 1.0
                box.u16(0x0100)  // volume 1.0
                box.zeros(10)
                box.unityMatrix()
                box.zeros(24)
                box.u32(trackID + 1)  // next track ID
            }
            moov.box("trak") { trak in
                trak.fullBox("tkhd", flags: 0x3) { box in  // enabled, in the movie
                    box.zeros(8)
                    box.u32(trackID)
                    box.zeros(4)
                    box.u32(0)  // duration
                    box.zeros(8)
                    box.u16(0)  // layer
                    box.u16(1)  // alternate group: the audio tracks
                    box.u16(0x0100)  // volume
                    box.zeros(2)
                    box.unityMatrix()
                    box.u32(0)  // width, height: audio
                    box.u32(0)
                }
                trak.box("mdia") { mdia in
                    mdia.fullBox("mdhd") { box in
                        box.zeros(8)
                        box.u32(timescale)
                        box.u32(0)
                        box.u16(0x55C4)  // language "und"
                        box.u16(0)
                    }
                    mdia.fullBox("hdlr") { box in
                        box.u32(0)
                        box.fourCC("soun")
                        box.zeros(12)
                        box.append(Array("SoundHandler".utf8) + [0])
                    }
                    mdia.box("minf") { minf in
                        minf.fullBox("smhd") { $0.u32(0) }
                        minf.box("dinf") { dinf in
                            dinf.fullBox("dref") { dref in
                                dref.u32(1)
                                dref.fullBox("url ", flags: 1) { _ in }  // the media is in the same file
                            }
                        }
                        minf.box("stbl") { stbl in
                            stbl.fullBox("stsd") { stsd in
                                stsd.u32(1)
                                sampleEntry(head, into: &stsd)
                            }
                            // No samples here: they come in the fragments.
                            stbl.fullBox("stts") { $0.u32(0) }
                            stbl.fullBox("stsc") { $0.u32(0) }
                            stbl.fullBox("stsz") { box in
                                box.u32(0)
                                box.u32(0)
                            }
                            stbl.fullBox("stco") { $0.u32(0) }
                        }
                    }
                }
            }
            moov.box("mvex") { mvex in
                mvex.fullBox("trex") { box in
                    box.u32(trackID)
                    box.u32(1)  // sample description 1
                    box.u32(0)  // durations, sizes and flags: in each trun (every sample is a sync sample)
                    box.u32(0)
                    box.u32(0)
                }
            }
        }
        return writer.bytes
    }

    /// The `Opus` audio sample entry (ISO/IEC 14496-12 AudioSampleEntry, then `dOps`).
    private static func sampleEntry(_ head: OpusPacketInfo.Head, into writer: inout MP4Writer) {
        writer.box("Opus") { box in
            box.zeros(6)
            box.u16(1)  // data reference index
            box.zeros(8)
            box.u16(UInt16(clamping: head.channels))
            box.u16(16)  // sample size
            box.u16(0)
            box.u16(0)
            box.u32(timescale << 16)  // 48 kHz as 16.16
            opusSpecific(head, into: &box)
        }
    }

    /// One media segment: `moof` (`mfhd` with `sequence`, `traf` with `tfhd`, `tfdt` at `decodeTime`, `trun`) and
    /// `mdat` with the packets, back to back.
    /// - Parameter samples: each packet's size in bytes and duration in 48 kHz samples, in order.
    package static func mediaSegment(
        sequence: UInt32, decodeTime: UInt64, samples: [(size: Int, duration: Int)], data: [UInt8]
    ) -> [UInt8] {
        var writer = MP4Writer(capacity: data.count + 100 + 8 * samples.count)
        var dataOffsetAt = 0
        writer.box("moof") { moof in
            moof.fullBox("mfhd") { $0.u32(sequence) }
            moof.box("traf") { traf in
                traf.fullBox("tfhd", flags: 0x02_0000) { $0.u32(trackID) }  // default-base-is-moof
                traf.fullBox("tfdt", version: 1) { $0.u64(decodeTime) }
                // data-offset, sample-duration and sample-size present
                traf.fullBox("trun", flags: 0x000_0301) { box in
                    box.u32(UInt32(clamping: samples.count))
                    dataOffsetAt = box.bytes.count
                    box.u32(0)
                    for sample in samples {
                        box.u32(UInt32(clamping: sample.duration))
                        box.u32(UInt32(clamping: sample.size))
                    }
                }
            }
        }
        // The first packet's offset from the start of the moof: past it and the mdat header.
        let offset = UInt32(clamping: writer.bytes.count + 8)
        var bytes = writer.bytes
        for index in 0..<4 { bytes[dataOffsetAt + index] = UInt8(truncatingIfNeeded: offset >> (24 - 8 * index)) }
        let mdatSize = UInt32(clamping: data.count + 8)
        for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: mdatSize >> (24 - 8 * index))) }
        bytes.append(contentsOf: Array("mdat".utf8))
        bytes.append(contentsOf: data)
        return bytes
    }
}
