// registry.hpp: named shapes, looked up by the renderer each frame.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace geo {

/// A closed 2-D figure.
class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual std::string name() const = 0;
};

enum class Unit { Millimetre, Inch };

/// Owns shapes by name; not thread-safe.
class Registry {
public:
    explicit Registry(Unit unit);
    void add(const std::string &key, std::unique_ptr<Shape> shape);
    const Shape *find(const std::string &key) const;
    double total_area() const;

private:
    Unit unit_;
    std::map<std::string, std::unique_ptr<Shape>> shapes_;
};

template <typename T>
T clamp(T v, T lo, T hi)
{
    return v < lo ? lo : hi < v ? hi : v;
}

} // namespace geo
