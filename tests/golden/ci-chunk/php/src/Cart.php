<?php

declare(strict_types=1);

namespace App\Shop;

use App\Shop\Pricing\TaxRule;
use InvalidArgumentException;
use Psr\Log\LoggerInterface as Logger;

require_once __DIR__ . '/helpers.php';

interface Priced
{
    public function priceCents(): int;
}

enum Currency: string
{
    case Euro = 'EUR';
    case Dollar = 'USD';

    public function symbol(): string
    {
        return match ($this) {
            self::Euro => '€',
            self::Dollar => '$',
        };
    }
}

trait Loggable
{
    private ?Logger $logger = null;

    protected function log(string $message): void
    {
        $this->logger?->info($message);
    }
}

/**
 * A shopping cart.  Lines are keyed by SKU.
 */
final class Cart implements Priced, \Countable
{
    use Loggable;

    public const MAX_LINES = 100;

    /** @var array<string, array{price: int, qty: int}> */
    private array $lines = [];

    public function __construct(private Currency $currency = Currency::Euro)
    {
    }

    public function add(string $sku, int $price, int $qty = 1): self
    {
        if ($qty <= 0) {
            throw new InvalidArgumentException("bad quantity for $sku");
        }
        if (count($this->lines) >= self::MAX_LINES) {
            $this->log('cart is full');
            return $this;
        }
        $this->lines[$sku] = ['price' => $price, 'qty' => ($this->lines[$sku]['qty'] ?? 0) + $qty];
        return $this;
    }

    public function priceCents(): int
    {
        return array_sum(array_map(fn (array $l): int => $l['price'] * $l['qty'], $this->lines));
    }

    public function count(): int
    {
        return count($this->lines);
    }

    public static function fromArray(array $data, ?TaxRule $rule = null): static
    {
        $cart = new static(Currency::from($data['currency'] ?? 'EUR'));
        foreach ($data['lines'] ?? [] as $sku => $line) {
            $cart->add((string) $sku, $line['price'], $line['qty']);
        }
        return $cart;
    }
}

function cart_summary(Cart $cart): string
{
    return count($cart) . ' lines, ' . format_cents($cart->priceCents());
}
