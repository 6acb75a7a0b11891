// simdjson's On-Demand API on the same NDJSON and the same fields as
// swell-json-bench's projection (id, date, height, period, wind, location,
// rating, spot.name), folded into the same kind of checksum: a reference point
// for BENCHMARKS.md, not part of Swell. Built and run by bench/simdjson/run.sh.
//
//   ndjson-fields FILE [REPS]
//
// The file is loaded (padded) first; each pass runs iterate_many over it and
// reports the thread's CPU seconds. Keys are looked up in any order
// (find_field_unordered, through operator[]). simdjson validates UTF-8 and
// the structure of the whole input in its first stage; values that are not
// asked for are not converted.
#include <simdjson.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

using namespace simdjson;

static double thread_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

static bool add_string(ondemand::object& object, const char* key, uint64_t& checksum) {
    std::string_view text;
    if (object[key].get_string().get(text)) return false;
    checksum += text.size() + (text.empty() ? 0 : uint8_t(text[0]));
    return true;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: ndjson-fields FILE [REPS]\n");
        return 64;
    }
    int reps = argc > 2 ? std::atoi(argv[2]) : 1;
    padded_string json;
    if (padded_string::load(argv[1]).get(json)) {
        std::fprintf(stderr, "ndjson-fields: cannot read %s\n", argv[1]);
        return 66;
    }
    ondemand::parser parser;
    for (int pass = 1; pass <= reps; pass++) {
        double start = thread_seconds();
        uint64_t checksum = 0;
        size_t records = 0;
        ondemand::document_stream stream;
        if (parser.iterate_many(json).get(stream)) return 65;
        for (auto result : stream) {
            ondemand::document_reference doc;
            ondemand::object object;
            if (std::move(result).get(doc) || doc.get_object().get(object)) return 65;
            int64_t id;
            if (object["id"].get_int64().get(id)) return 65;
            checksum += uint64_t(id);
            if (!add_string(object, "date", checksum) || !add_string(object, "height", checksum)
                || !add_string(object, "period", checksum) || !add_string(object, "wind", checksum)
                || !add_string(object, "location", checksum)) return 65;
            ondemand::value rating;
            if (object["rating"].get(rating)) return 65;
            bool is_null;
            if (rating.is_null().get(is_null)) return 65;
            if (!is_null) {
                int64_t value;
                if (rating.get_int64().get(value)) return 65;
                checksum += uint64_t(value);
            }
            ondemand::object spot;
            if (object["spot"].get_object().get(spot)) return 65;
            if (!add_string(spot, "name", checksum)) return 65;
            checksum += records;
            records++;
        }
        double cpu = thread_seconds() - start;
        std::printf("simdjson pass %d: %zu records, %.3f MB, cpu %.3f s, %.1f MB/s (cpu), checksum %llu, On-Demand kernel %s\n",
                    pass, records, json.size() / 1e6, cpu, json.size() / 1e6 / cpu, (unsigned long long)checksum,
                    SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION));
    }
    return 0;
}
