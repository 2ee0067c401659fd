// registry.cpp: the shapes the renderer knows and the registry that holds them.
#include "registry.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace geo {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Millimetres per unit.
double scale(Unit u)
{
    switch (u) {
    case Unit::Millimetre:
        return 1.0;
    case Unit::Inch:
        return 25.4;
    }
    throw std::invalid_argument("unit");
}

} // namespace

struct Circle : public Shape {
    explicit Circle(double r) : radius(r) {}

    double area() const override { return kPi * radius * radius; }
    std::string name() const override { return "circle"; }

    double radius;
};

class Polygon : public Shape {
public:
    Polygon(std::initializer_list<std::pair<double, double>> pts) : points_(pts) {}

    // Shoelace formula.
    double area() const override
    {
        double sum = 0;
        for (std::size_t i = 0; i < points_.size(); i++) {
            const auto &a = points_[i];
            const auto &b = points_[(i + 1) % points_.size()];
            sum += a.first * b.second - b.first * a.second;
        }
        return std::abs(sum) / 2;
    }

    std::string name() const override { return "polygon"; }

private:
    std::vector<std::pair<double, double>> points_;
};

Registry::Registry(Unit unit) : unit_(unit) {}

void Registry::add(const std::string &key, std::unique_ptr<Shape> shape)
{
    if (!shape)
        throw std::invalid_argument("null shape for " + key);
    shapes_[key] = std::move(shape);
}

const Shape *Registry::find(const std::string &key) const
{
    auto it = shapes_.find(key);
    return it == shapes_.end() ? nullptr : it->second.get();
}

/*
 * The sum of all areas in square millimetres.  Long on purpose: the chunker
 * cuts a unit longer than --max-chunk-lines at its statements.
 */
double Registry::total_area() const
{
    double total = 0;
    double k = scale(unit_);
    std::size_t counted = 0;

    for (const auto &entry : shapes_) {
        const Shape *s = entry.second.get();
        if (!s)
            continue;
        double a = s->area();
        if (std::isnan(a))
            continue;
        total += a;
        counted++;
    }

    auto largest = std::max_element(shapes_.begin(), shapes_.end(),
        [](const auto &x, const auto &y) {
            return x.second->area() < y.second->area();
        });
    if (largest != shapes_.end() && counted > 1) {
        double big = largest->second->area();
        if (big > total)
            throw std::logic_error("area overflow");
    }

    total *= k * k;
    return clamp(total, 0.0, 1e12);
}

bool operator==(const Shape &a, const Shape &b)
{
    return a.name() == b.name() && a.area() == b.area();
}

} // namespace geo
