#include "core/render/matrix.hpp"

#include <algorithm>
#include <set>

#include "core/render/platforms.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

const std::vector<std::string> k_axis_order = {"torch", "cuda", "flavor", "os", "ngc"};

// The cell being resolved: axis -> (value, index in its matrix list).
struct Cell {
    std::map<std::string, std::pair<std::string, std::size_t>> at;
    const std::string& operator[](const std::string& axis) const { return at.at(axis).first; }
    bool has(const std::string& axis) const { return at.count(axis) > 0; }
    std::string path(const std::string& axis) const {
        return "$.matrix." + axis + "[" + std::to_string(at.at(axis).second) + "]";
    }
};

std::string max_driver(const std::string& a, const std::string& b) {
    auto va = Version::parse(a), vb = Version::parse(b);
    if (!va) return b;
    if (!vb) return a;
    return *va < *vb ? b : a;
}

std::string range_text(const std::vector<std::string>& xs) {
    if (xs.empty()) return "none";
    if (xs.size() <= 6) return join(xs, ", ");
    return xs.front() + " ... " + xs.back() + " (" + std::to_string(xs.size()) + " known)";
}

class Expander {
  public:
    Expander(const std::shared_ptr<const Manifest>& m, const KnowledgeBase& kb,
             const LockDigests& lock, Diagnostics& diags)
        : m_m(m), m_kb(kb), m_lock(lock), m_diags(diags) {}

    void run(std::vector<Variant>& out) {
        bool axes_ok = check_axis_values();
        if (!check_gpus() || !axes_ok) return;
        std::vector<std::string> axes;
        for (const auto& a : k_axis_order)
            if (!values(a).empty()) axes.push_back(a);
        std::vector<std::size_t> idx(axes.size(), 0);
        std::size_t kept = 0;
        while (true) {
            Cell cell;
            for (std::size_t i = 0; i < axes.size(); ++i)
                cell.at[axes[i]] = {values(axes[i])[idx[i]], idx[i]};
            if (!excluded(cell)) {
                ++kept;
                Variant v;
                if (resolve(cell, v)) out.push_back(std::move(v));
            }
            std::size_t i = axes.size();
            while (i > 0 && ++idx[i - 1] == values(axes[i - 1]).size()) idx[--i] = 0;
            if (i == 0) break;
        }
        // A family whose exclude rules remove every cell would silently vanish from the tree.
        if (kept == 0)
            error("$.matrix.exclude",
                  "the exclude rules remove every cell of the matrix, so this manifest renders "
                  "nothing; remove a rule or the manifest");
    }

  private:
    std::shared_ptr<const Manifest> m_m;
    const KnowledgeBase& m_kb;
    const LockDigests& m_lock;
    Diagnostics& m_diags;
    std::set<std::pair<std::string, std::string>> m_reported;

    const std::vector<std::string>& values(const std::string& axis) const {
        if (axis == "torch") return m_m->torch;
        if (axis == "cuda") return m_m->cuda;
        if (axis == "flavor") return m_m->flavor;
        if (axis == "os") return m_m->os;
        return m_m->ngc;
    }

    void error(const std::string& path, const std::string& message) {
        if (m_reported.insert({path, message}).second)
            m_diags.add(m_m->pos_of(path), path, message);
    }

    bool excluded(const Cell& cell) const {
        for (const auto& rule : m_m->exclude) {
            bool all = true;
            for (const auto& [axis, value] : rule.fields)
                all = all && cell.has(axis) && cell[axis] == value;
            if (all) return true;
        }
        return false;
    }

    void unknown(const std::string& path, const std::string& what, const std::string& value,
                 const std::vector<std::string>& known, const std::string& file) {
        std::string msg = what + " " + quote_value(value) + " is not in the knowledge base (data/" +
                          file + "); known: " + range_text(known);
        if (auto near = closest_match(value, known)) msg += "; did you mean \"" + *near + "\"?";
        error(path, msg);
    }

    bool check_axis_values() {
        std::size_t before = m_diags.count();
        for (std::size_t i = 0; i < m_m->torch.size(); ++i)
            if (!m_kb.torch(m_m->torch[i]))
                error(item_path("torch", i), m_kb.unknown_torch_text(m_m->torch[i]));
        for (std::size_t i = 0; i < m_m->ngc.size(); ++i)
            if (!m_kb.ngc(m_m->ngc[i])) {
                std::string msg = "NGC PyTorch release " + quote_value(m_m->ngc[i]) +
                                  " does not exist (no nvcr.io/nvidia/pytorch:" + m_m->ngc[i] +
                                  "-py3); known releases: " + range_text(m_kb.ngc_releases());
                if (auto near = closest_match(m_m->ngc[i], m_kb.ngc_releases()))
                    msg += "; did you mean \"" + *near + "\"?";
                error(item_path("ngc", i), msg);
            }
        for (std::size_t i = 0; i < m_m->os.size(); ++i) {
            const auto& id = m_m->os[i];
            const OsInfo* os = m_kb.os(id);
            if (!os) {
                unknown(item_path("os", i), "OS", id, m_kb.os_ids(), "os.json");
            } else if ((m_m->base == BaseKind::NvidiaCuda ||
                        m_m->base == BaseKind::NvidiaCudaCudnn) &&
                       os->family != "ubuntu") {
                error(item_path("os", i),
                      "nvidia/cuda publishes Ubuntu images only among the OSes "
                      "torchdock knows; " +
                          id + " is " + os->family);
            } else if (m_m->base == BaseKind::DebianTorch && !os->distro_torch) {
                error(item_path("os", i), "no distribution torch package is known for " + id +
                                              "; debian-torch supports: debian12");
            }
        }
        return m_diags.count() == before;
    }

    static std::string item_path(const std::string& axis, std::size_t i) {
        return "$.matrix." + axis + "[" + std::to_string(i) + "]";
    }

    bool check_gpus() {
        std::size_t before = m_diags.count();
        for (std::size_t i = 0; i < m_m->target_gpus.size(); ++i)
            if (!m_kb.gpu(m_m->target_gpus[i]))
                unknown("$.target_gpus[" + std::to_string(i) + "]", "GPU model",
                        m_m->target_gpus[i], m_kb.gpu_names(), "gpus.json");
        return m_diags.count() == before;
    }

    bool resolve(const Cell& cell, Variant& v) {
        std::size_t before = m_diags.count();
        v.manifest = m_m;
        std::vector<std::string> parts;
        for (const auto& [axis, value] : cell.at) v.axes[axis] = value.first;
        for (const auto& a : k_axis_order)
            if (cell.has(a)) parts.push_back(cell[a]);
        v.tag = join(parts, "-");
        v.name = m_m->name + "-" + v.tag;
        v.flavor = cell.has("flavor") ? cell["flavor"]
                                      : (m_m->base == BaseKind::Ngc ? "devel" : "runtime");

        switch (m_m->base) {
            case BaseKind::NvidiaCuda:
            case BaseKind::NvidiaCudaCudnn:
            case BaseKind::Pytorch:
            case BaseKind::OsPip:
                resolve_wheels(cell, v);
                break;
            case BaseKind::Ngc:
                resolve_ngc(cell, v);
                break;
            case BaseKind::DebianTorch:
                resolve_debian(cell, v);
                break;
        }
        if (m_diags.count() != before) return false;
        check_targets(cell, v);
        v.apt = m_m->apt_for(v.os_id);
        if (!m_m->extensions.empty()) {
            auto report = [&](const std::string& path, const std::string& msg) {
                error(path, msg);
            };
            v.extensions =
                resolve_extensions(*m_m, v.name, v.torch, v.python, v.target_gpus, m_kb, report);
            v.source_build = plan_source_build(v, m_kb, report);
        }
        check_expectations(v);
        const auto& platforms = m_m->platforms;
        for (std::size_t i = 0; i < platforms.size(); ++i)
            if (auto why = platform_refusal(v, platforms[i], m_kb); !why.empty())
                error("$.platforms[" + std::to_string(i) + "]",
                      "variant " + v.name + " for " + platforms[i] + ": " + why);
        if (auto it = m_lock.find(v.base_ref); it != m_lock.end()) v.base_digest = it->second;
        return m_diags.count() == before;
    }

    // Bases where torch comes from the PyTorch wheel index (or is the pytorch/pytorch image).
    void resolve_wheels(const Cell& cell, Variant& v) {
        const TorchRelease* tr = m_kb.torch(cell["torch"]);
        const std::string& wheel = cell["cuda"];
        const TorchVariant* tv = tr->variant(wheel);
        if (m_m->base != BaseKind::Pytorch) check_python(cell, *tr, m_kb.os(cell["os"])->python);
        if (!tv) {
            std::string msg = "torch " + tr->version + " has no " + wheel +
                              " wheels; published variants: " + join(tr->variant_names(), ", ");
            auto with = m_kb.torch_with_variant(wheel);
            msg += with.empty() ? "; no torch release publishes " + wheel
                                : "; " + wheel + " wheels exist for torch " + range_text(with);
            return error(cell.path("cuda"), msg);
        }
        if (wheel == "cpu" && m_m->base != BaseKind::OsPip)
            return error(cell.path("cuda"),
                         std::string("base \"") + base_kind_name(m_m->base) +
                             "\" is a CUDA image; cpu wheels need base \"os-pip\"");
        if (m_m->wheel_index == WheelIndex::Pypi && wheel != tr->pypi_variant)
            return error(cell.path("cuda"), pypi_refusal(*tr, wheel));
        v.torch = tr->version;
        v.wheel_variant = wheel;
        v.cuda = tv->cuda;
        v.cudnn = tv->cudnn;
        v.nccl = tv->nccl;
        v.arch_list = tv->arch_list;
        pick_extras(*tr, v);

        std::string image_python;
        if (m_m->base == BaseKind::Pytorch) {
            const PytorchImageTag* tag = m_kb.pytorch_image(tr->version, tv->cuda);
            if (!tag)
                return error(cell.path("cuda"), "pytorch/pytorch has no image for torch " +
                                                    tr->version + " with CUDA " + tv->cuda);
            if (std::find(tag->flavors.begin(), tag->flavors.end(), v.flavor) == tag->flavors.end())
                return error(cell.path("flavor"), "pytorch/pytorch has no " + v.flavor +
                                                      " image for torch " + tr->version +
                                                      " with CUDA " + tv->cuda);
            v.base_ref = "pytorch/pytorch:" + tr->version + "-cuda" + tv->cuda + "-cudnn" +
                         std::to_string(tag->cudnn_major) + "-" + v.flavor;
            v.os_family = "ubuntu";
            image_python = tag->python;
        } else {
            const OsInfo* os = m_kb.os(cell["os"]);
            v.os_id = os->id;
            v.os_family = os->family;
            image_python = os->python;
            v.torch_source = m_m->wheel_index == WheelIndex::Pypi
                                 ? Variant::TorchSource::Pypi
                                 : Variant::TorchSource::PytorchIndex;
            check_glibc(cell, *tr, *os);
            system_python(*os, v);
            if (m_m->base == BaseKind::OsPip)
                v.base_ref = os->image;
            else if (!cuda_base(cell, *os, v))
                return;
        }
        v.python = image_python;
        if (m_m->base == BaseKind::Pytorch) check_python(cell, *tr, image_python);
        set_driver_floor(cell, v);
    }

    // PyPI serves one build of each release, without a local version tag.
    std::string pypi_refusal(const TorchRelease& tr, const std::string& wheel) const {
        if (tr.pypi_variant.empty())
            return "the knowledge base does not know which build PyPI serves for torch " +
                   tr.version +
                   " (torch.json has no default_variant; `torchdock kb refresh` "
                   "reads it from the wheels); use \"wheel_index\": \"pytorch\"";
        std::vector<std::string> with;
        for (const auto& r : m_kb.torch_releases())
            if (r.pypi_variant == wheel) with.push_back(r.version);
        return "PyPI serves torch " + tr.version + " only as its default build, " +
               tr.pypi_variant + " (torch==" + tr.version + ", no local version tag); " + wheel +
               " wheels are on the PyTorch wheel index (\"wheel_index\": \"pytorch\")" +
               (with.empty()
                    ? std::string()
                    : "; PyPI's default build is " + wheel + " for torch " + range_text(with));
    }

    bool cuda_base(const Cell& cell, const OsInfo& os, Variant& v) {
        bool cudnn = m_m->base == BaseKind::NvidiaCudaCudnn;
        const CudaImageRelease* rel = m_kb.cuda_image(v.cuda, os.id, cudnn);
        if (!rel) {
            std::vector<std::string> oses;
            for (const auto& r : m_kb.cuda_images())
                if (r.cuda_major_minor == v.cuda)
                    for (const auto& o : cudnn ? r.cudnn_os : r.os)
                        if (std::find(oses.begin(), oses.end(), o) == oses.end()) oses.push_back(o);
            error(cell.path("os"),
                  std::string("nvidia/cuda has no CUDA ") + v.cuda + (cudnn ? " cuDNN" : "") +
                      " tags for " + os.id +
                      (oses.empty() ? std::string("; no tags for CUDA ") + v.cuda + " at all"
                                    : "; it has them for: " + join(oses, ", ")));
            return false;
        }
        v.base_cuda = rel->cuda;
        v.base_ref = "nvidia/cuda:" + rel->cuda + "-" + (cudnn ? rel->cudnn_tag + "-" : "") +
                     v.flavor + "-" + os.id;
        if (cudnn) v.base_cudnn = rel->cudnn;
        return true;
    }

    // manylinux wheels need at least the glibc their platform tag names.
    void check_glibc(const Cell& cell, const TorchRelease& tr, const OsInfo& os) {
        auto need = Version::parse(tr.glibc), have = Version::parse(os.glibc);
        if (need && have && *have < *need)
            error(cell.path("os"), "torch " + tr.version + " wheels need glibc " + tr.glibc +
                                       " or newer (their manylinux tag); " + os.id + " has glibc " +
                                       os.glibc);
    }

    void system_python(const OsInfo& os, Variant& v) {
        std::vector<std::string> pkgs = {"python3", "python3-venv"};
        v.system_apt_pinned = true;
        for (const auto& p : pkgs) {
            auto it = os.apt_pins.find(p);
            if (it == os.apt_pins.end()) v.system_apt_pinned = false;
        }
        for (const auto& p : pkgs)
            v.system_apt.push_back(v.system_apt_pinned ? p + "=" + os.apt_pins.at(p) : p);
        if (!v.system_apt_pinned) v.os_python_assert = os.python;
    }

    void pick_extras(const TorchRelease& tr, Variant& v) {
        auto extra = [&](bool wanted, const char* key, const std::string& version,
                         std::string& out) {
            if (!wanted) return;
            if (!version.empty())
                out = version;
            else if (m_m->positions.count(std::string("$.") + key))
                error(std::string("$.") + key, std::string("no ") + key +
                                                   " release exists for torch " + tr.version +
                                                   "; set \"" + key + "\": false");
        };
        extra(m_m->torchvision, "torchvision", tr.torchvision, v.torchvision);
        extra(m_m->torchaudio, "torchaudio", tr.torchaudio, v.torchaudio);
    }

    void check_python(const Cell& cell, const TorchRelease& tr, const std::string& image_python) {
        const std::string& py = m_m->python ? *m_m->python : image_python;
        std::string where =
            m_m->python ? "$.python" : (cell.has("os") ? cell.path("os") : cell.path("torch"));
        auto v = Version::parse(py), lo = Version::parse(tr.python_min),
             hi = Version::parse(tr.python_max);
        if (v && lo && hi && !(*lo <= *v && *v <= *hi)) {
            std::string msg = "torch " + tr.version + " publishes wheels for Python " +
                              tr.python_min + " to " + tr.python_max + ", not " + py;
            if (!m_m->python) msg += " (the Python of this base image)";
            if (auto first = m_kb.first_torch_for_python(py))
                msg += "; the first torch with Python " + py + " wheels is " + *first;
            error(where, msg);
        }
        if (m_m->python && *m_m->python != image_python) {
            std::string msg =
                "Python " + *m_m->python + " is not the Python of this base (" + image_python + ")";
            if (cell.has("os")) {
                std::vector<std::string> fits;
                bool ubuntu_only =
                    m_m->base == BaseKind::NvidiaCuda || m_m->base == BaseKind::NvidiaCudaCudnn;
                for (const auto& id : m_kb.os_ids())
                    if (m_kb.os(id)->python == *m_m->python &&
                        (!ubuntu_only || m_kb.os(id)->family == "ubuntu"))
                        fits.push_back(id);
                msg += "; torchdock uses the OS Python of " + cell["os"] + ": set \"python\": \"" +
                       image_python + "\"" +
                       (fits.empty() ? std::string()
                                     : ", or choose an OS with Python " + *m_m->python + ": " +
                                           join(fits, ", "));
            }
            error("$.python", msg);
        }
    }

    void set_driver_floor(const Cell& cell, Variant& v) {
        if (v.cuda.empty()) return;
        const CudaMinor* c = m_kb.cuda(v.cuda);
        if (!c)
            return error(cell.path("cuda"),
                         "CUDA " + v.cuda + " is not in the knowledge base (data/cuda.json)");
        v.min_driver = m_kb.min_driver(v.cuda);
        v.min_driver_unconfirmed = m_kb.min_driver_unconfirmed(v.cuda);
        if (!v.base_cuda.empty()) {
            bool unconfirmed = false;
            std::string floor = m_kb.min_driver_of_release(v.base_cuda, &unconfirmed);
            if (!floor.empty()) {
                std::string raised = max_driver(v.min_driver, floor);
                if (raised != v.min_driver) v.min_driver_unconfirmed = unconfirmed;
                v.min_driver = raised;
            }
        }
        v.min_driver_compat = c->minor_compat_min_driver;
    }

    void resolve_ngc(const Cell& cell, Variant& v) {
        const NgcRelease* rel = m_kb.ngc(cell["ngc"]);
        v.base_ref = "nvcr.io/nvidia/pytorch:" + rel->release + "-py3";
        v.os_family = "ubuntu";
        v.torch = rel->torch;
        v.python = rel->python;
        v.base_cuda = rel->cuda;
        auto cv = Version::parse(rel->cuda);
        v.cuda = cv ? cv->major_minor() : std::string();
        v.cudnn = rel->cudnn;
        v.nccl = rel->nccl;
        if (m_m->python && *m_m->python != rel->python)
            error("$.python", "NGC PyTorch " + rel->release + " ships Python " + rel->python +
                                  ", not " + *m_m->python);
        if (m_m->openmpi)
            error("$.openmpi",
                  "NGC PyTorch images ship their own OpenMPI (HPC-X); leave \"openmpi\" out");
        if (v.cuda.empty() || !m_kb.cuda(v.cuda))
            return error(cell.path("ngc"), "the CUDA version of NGC " + rel->release + " (" +
                                               rel->cuda + ") is not in the knowledge base");
        v.min_driver = max_driver(m_kb.min_driver(v.cuda), rel->min_driver);
        v.min_driver_unconfirmed = v.min_driver == rel->min_driver
                                       ? rel->unconfirmed
                                       : m_kb.min_driver_unconfirmed(v.cuda);
        v.min_driver_compat = m_kb.cuda(v.cuda)->minor_compat_min_driver;
    }

    void resolve_debian(const Cell& cell, Variant& v) {
        const OsInfo* os = m_kb.os(cell["os"]);
        const auto& dt = *os->distro_torch;
        v.base_ref = os->image;
        v.os_id = os->id;
        v.os_family = os->family;
        v.python = os->python;
        v.torch = dt.at("torch");
        if (auto it = dt.find("torch_reports"); it != dt.end()) v.torch_reports = it->second;
        if (m_m->torchvision) v.torchvision = dt.at("torchvision");
        if (m_m->torchaudio) v.torchaudio = dt.at("torchaudio");
        std::vector<std::string> pkgs = {"python3", "python3-venv", dt.at("package")};
        if (m_m->torchvision) pkgs.push_back("python3-torchvision");
        if (m_m->torchaudio) pkgs.push_back("python3-torchaudio");
        for (const auto& p : pkgs) {
            auto it = os->apt_pins.find(p);
            if (it == os->apt_pins.end())
                return error(cell.path("os"),
                             "no pinned version of " + p + " for " + os->id + " in data/os.json");
            v.system_apt.push_back(p + "=" + it->second);
        }
        if (m_m->python && *m_m->python != os->python)
            error("$.python", "Debian's python3-torch on " + os->id + " uses Python " + os->python +
                                  ", not " + *m_m->python);
    }

    void check_targets(const Cell& cell, Variant& v) {
        for (std::size_t i = 0; i < m_m->target_gpus.size(); ++i) {
            const GpuModel* g = m_kb.gpu(m_m->target_gpus[i]);
            std::string path = "$.target_gpus[" + std::to_string(i) + "]";
            std::string gpu = g->model + " (" + sm_name(g->cc) + ")";
            v.target_gpus.push_back(g->model);
            if (v.cuda.empty()) {
                error(cell.has("cuda") ? cell.path("cuda") : path,
                      "variant " + v.name + " has no CUDA, so it cannot run on target GPU " + gpu);
                continue;
            }
            const CudaMinor* c = m_kb.cuda(v.cuda);
            // The CUDA libraries (cuBLAS, cuDNN, NCCL) of a release carry kernels only for the
            // architectures that release knows, so the toolkit must know the GPU's family.
            if (c && !sm_list_covers(c->sm, g->cc)) {
                std::string msg = "CUDA " + v.cuda + " does not support " + gpu +
                                  ": it targets sm_" + std::to_string(c->sm.front()) + " to sm_" +
                                  std::to_string(c->sm.back());
                if (auto first = m_kb.first_cuda_for(g->cc))
                    msg += "; " + sm_name(g->cc) + " needs CUDA " + *first + " or newer";
                else
                    msg += "; no CUDA release in the knowledge base supports it";
                if (auto last = m_kb.last_cuda_for(g->cc);
                    last && Version::parse(*last) && Version::parse(v.cuda) &&
                    *Version::parse(*last) < *Version::parse(v.cuda))
                    msg += "; the last CUDA that supports it is " + *last;
                error(path, msg + " (variant " + v.name + ")");
                continue;
            }
            if (!v.arch_list.empty() && !arch_list_covers(v.arch_list, g->cc)) {
                const TorchRelease* rel = m_kb.torch(v.torch);
                const TorchVariant* built = rel ? rel->variant(v.wheel_variant) : nullptr;
                std::string msg =
                    "torch " + v.torch + "+" + v.wheel_variant + " wheels are built for " +
                    join(v.arch_list, ", ") +
                    (built && built->unconfirmed ? " (unconfirmed in the knowledge base)" : "") +
                    ", which cannot run on " + gpu;
                std::vector<std::string> fits;
                if (const TorchRelease* tr = m_kb.torch(v.torch))
                    for (const auto& tv : tr->variants)
                        if (arch_list_covers(tv.arch_list, g->cc)) fits.push_back(tv.name);
                msg += fits.empty()
                           ? "; no variant of torch " + v.torch + " covers it"
                           : "; variants of torch " + v.torch + " that do: " + join(fits, ", ");
                error(cell.has("cuda") ? cell.path("cuda") : path, msg);
            }
        }
    }

    void check_expectations(const Variant& v) {
        if (m_m->expect_cudnn_major) {
            auto c = Version::parse(v.cudnn);
            if (!c)
                error("$.expect.cudnn_major", "the cuDNN version of " + v.name +
                                                  " is not in the knowledge base, so cuDNN " +
                                                  std::to_string(*m_m->expect_cudnn_major) +
                                                  " cannot be confirmed");
            else if (c->major() != *m_m->expect_cudnn_major)
                error("$.expect.cudnn_major", "expected cuDNN " +
                                                  std::to_string(*m_m->expect_cudnn_major) +
                                                  ", but " + v.name + " loads cuDNN " + v.cudnn);
        }
        if (m_m->expect_nccl) {
            auto want = Version::parse(*m_m->expect_nccl), have = Version::parse(v.nccl);
            if (!have || !(*want == *have))
                error("$.expect.nccl",
                      "expected NCCL " + *m_m->expect_nccl + ", but " + v.name +
                          (have ? " loads NCCL " + v.nccl : " has no known NCCL version"));
        }
    }
};

}  // namespace

void expand_manifest(const std::shared_ptr<const Manifest>& manifest, const KnowledgeBase& kb,
                     const LockDigests& lock, std::vector<Variant>& out, Diagnostics& diags) {
    Expander(manifest, kb, lock, diags).run(out);
}

}  // namespace td
