#pragma once
/// Hands the latest of a stream of values from one writer thread to one reader thread without
/// either waiting for the other: three slots, one the writer fills, one the reader holds, one
/// the latest published. The app's simulation thread publishes what the UI draws after each
/// step (app/sim_snapshot.hpp); the UI takes the newest each frame and reads it while the
/// worker fills another slot, so the reader never sees a slot being written (no torn state) and
/// the slots are reused (no allocation per step once their vectors have grown).

#include <array>
#include <cstdint>
#include <mutex>

namespace edn {

/// Triple buffer of T between one writer and one reader (see the file comment).
template <class T> class SnapshotExchange {
public:
    /// Writer: the slot to fill next (never the one the reader holds or the latest published).
    /// It keeps what was last written to it, so vectors are reused.
    T& back() { return slots_[back_]; }

    /// Writer: back() becomes the latest; the next back() is another slot.
    void publish() {
        const std::lock_guard lock(mutex_);
        latest_ = back_;
        fresh_ = true;
        ++published_;
        // The slot that is neither the latest nor held by the reader.
        for (int slot = 0; slot < 3; ++slot) {
            if (slot != latest_ && slot != held_) {
                back_ = slot;
                break;
            }
        }
    }

    /// Reader: the newest value published since the last take() (the reader holds it until the
    /// next take()), or nullptr when nothing new was published.
    const T* take() {
        const std::lock_guard lock(mutex_);
        if (!fresh_) return nullptr;
        fresh_ = false;
        held_ = latest_;
        return &slots_[held_];
    }

    /// Reader: forgets what was published so far (take() returns nullptr until the next
    /// publish()), e.g. when the reader has newer state from elsewhere. Not while the writer
    /// is between back() and publish() unless stale values are acceptable.
    void discard() {
        const std::lock_guard lock(mutex_);
        fresh_ = false;
    }

    /// How many values were published so far.
    std::int64_t published() const {
        const std::lock_guard lock(mutex_);
        return published_;
    }

private:
    std::array<T, 3> slots_{};
    mutable std::mutex mutex_;
    int back_ = 0;    // the writer's; changed only by publish() (writer thread)
    int latest_ = -1; // last published slot (-1: none)
    int held_ = -1;   // the reader's slot (-1: none)
    bool fresh_ = false;
    std::int64_t published_ = 0;
};

} // namespace edn
