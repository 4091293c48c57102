#include "engine/image_host.hpp"

#include <map>
#include <mutex>

#include "engine/remote_probes.hpp"
#include "util/strings.hpp"

namespace td::engine {

struct EngineHost::Volumes {
    std::mutex mutex;
    std::map<std::string, std::string> of_dir;
};

EngineHost::EngineHost(DockerApi api)
    : m_api(std::move(api)), m_volumes(std::make_shared<Volumes>()) {}

Result<ContainerRunResult> EngineHost::run(const ContainerRunSpec& spec) const {
    if (!m_api.endpoint().remote()) return run_container(m_api, spec);
    ContainerRunSpec remote = spec;
    for (auto& bind : remote.binds) {
        auto parts = split(bind, ':');
        if (parts.size() < 2 || parts[0].empty() || parts[0][0] != '/') continue;
        std::string volume;
        {
            std::lock_guard lock(m_volumes->mutex);
            auto it = m_volumes->of_dir.find(parts[0]);
            if (it != m_volumes->of_dir.end()) {
                volume = it->second;
            } else {
                auto made = remote_probe_volume(m_api, spec.image, parts[0]);
                if (!made) return made.error();
                volume = m_volumes->of_dir[parts[0]] = made.value();
            }
        }
        parts[0] = volume;
        bind = join(parts, ":");
    }
    return run_container(m_api, remote);
}

}  // namespace td::engine
